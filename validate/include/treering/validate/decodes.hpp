// Measured decodes (treering-realrun's `decode -o FILE.json`) beside the model's and the simulator's latency for
// the same plan: algorithm, workload and batch, context length and ranks, on the GPUs 0 .. ranks-1 of a cluster.
// The plans are the ones realrun runs (model::realrun_plan_options(): fp32 partial states, ring collectives).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "treering/topologies/topology.hpp"
#include "treering/validate/report.hpp"

namespace treering::validate {

struct DecodeMeasurement {
  std::string algorithm;  // ring, tree, tree-fused, tree-lse, allgather-merge
  std::string workload;   // a preset name
  int batch = 1;
  long long seq_len = 0;
  int ranks = 0;
  double latency_s = 0;          // the median over repeats
  std::string backend;           // cpu | cuda | cuda-loopback: the plan options it ran (model::realrun_plan_options)
  std::optional<double> spread;  // (p90 - p10) / median of its repeats, when the file has them
  std::string file;
};

struct DecodeCase {
  DecodeMeasurement measured;
  std::map<Engine, double> predicted_s;
  // How noisy the measurement is, relative: the larger of its repeats' spread and the spread of the same case's
  // medians in other files ((largest - smallest) / their mean). 0 when neither is known.
  double noise = 0;
  std::string extrapolation;  // where the plan leaves the calibration's measured ranges (model/extrapolation.hpp)
  double error(Engine engine) const { return (predicted_s.at(engine) - measured.latency_s) / measured.latency_s; }
};

// True when `path` is a realrun decode file (JSON whose results carry "algo").
bool is_decode_file(const std::string& path);

// Throws topologies::InputError for unreadable or malformed files, naming the missing field.
std::vector<DecodeMeasurement> read_decode_measurements(const std::string& path);

// Throws std::invalid_argument for more ranks than the cluster has GPUs, or an unknown algorithm or workload.
std::vector<DecodeCase> predict_decodes(const topologies::Topology& topology,
                                        const std::vector<DecodeMeasurement>& measured,
                                        const std::vector<Engine>& engines);

// Per engine and algorithm (ErrorSummary::operation is the algorithm), with the median noise of its cases.
std::vector<ErrorSummary> summarise(const std::vector<DecodeCase>& cases, const std::vector<Engine>& engines);

}  // namespace treering::validate
