// Predictions against measurements: each measured case beside the model's (and the simulator's) prediction
// for the same operation, size and ranks on a cluster, and per engine and operation the median, p90 and max
// absolute relative error.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "treering/topologies/topology.hpp"
#include "treering/validate/measurements.hpp"

namespace treering::validate {

enum class Engine { model, sim };
const char* to_string(Engine engine);
Engine parse_engine(const std::string& name);  // throws std::invalid_argument

struct CaseResult {
  CollectiveMeasurement measured;
  std::map<Engine, double> predicted_s;
  std::string how;  // the model's algorithm/protocol
  double error(Engine engine) const { return (predicted_s.at(engine) - measured.time_s) / measured.time_s; }
};

struct ErrorSummary {
  Engine engine = Engine::model;
  std::string operation;
  int cases = 0;
  double median_abs_rel_error = 0;
  double p90_abs_rel_error = 0;
  double max_abs_rel_error = 0;
  std::optional<double> median_noise;  // decodes: the median of the cases' DecodeCase::noise
};

// The ranks run on GPUs 0 .. ranks - 1 of `topology` (node by node). The simulator's figure: the algorithm's
// latency plus the time its flows take together on the platform (collective_flows.hpp). Throws
// std::invalid_argument when a case has more ranks than the cluster has GPUs.
std::vector<CaseResult> predict_cases(const topologies::Topology& topology,
                                      const std::vector<CollectiveMeasurement>& measured,
                                      const std::vector<Engine>& engines);

// Per engine and operation; percentiles by nearest rank. Example: errors 1 %, 2 %, 10 %: median 2 %, p90 10 %.
std::vector<ErrorSummary> summarise(const std::vector<CaseResult>& cases, const std::vector<Engine>& engines);

// Throws std::invalid_argument (naming `file`) when `ranks` exceed the cluster's `gpus`.
void check_ranks_fit(int ranks, int gpus, const std::string& file);

// One engine's summary of |relative errors| (not empty) for one operation or algorithm.
ErrorSummary summary_of(Engine engine, const std::string& operation, const std::vector<double>& abs_errors);

}  // namespace treering::validate
