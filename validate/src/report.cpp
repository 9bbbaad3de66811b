#include "treering/validate/report.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "treering/model/collective_flows.hpp"
#include "treering/sim/collective_replay.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate {

const char* to_string(Engine engine) { return engine == Engine::model ? "model" : "sim"; }

Engine parse_engine(const std::string& name) {
  if (name == "model") return Engine::model;
  if (name == "sim") return Engine::sim;
  throw topologies::InputError("unknown engine '" + name + "' (model, sim)");
}

namespace {

// The collective as the simulator replays it (sim/collective_replay.hpp): the latency, then every flow on its route.
double simulated_s(const topologies::Topology& topology, const model::CommGroup& group, const CollectiveMeasurement& m,
                   const model::CollectiveCandidate& chosen) {
  return sim::simulate_collective(topology, group, m.op, m.bytes, chosen).time_s;
}

}  // namespace

std::vector<CaseResult> predict_cases(const topologies::Topology& topology,
                                      const std::vector<CollectiveMeasurement>& measured,
                                      const std::vector<Engine>& engines) {
  std::vector<CaseResult> results;
  for (const CollectiveMeasurement& m : measured) {
    check_ranks_fit(m.ranks, topology.gpu_count(), m.file);
    std::vector<int> gpus(static_cast<size_t>(m.ranks));
    std::iota(gpus.begin(), gpus.end(), 0);
    if (m.op == model::CollectiveOp::sendrecv && m.ranks > 2)
      gpus = {0, m.ranks - 1};  // a ring of sends: its slowest pair
    const model::CommGroup group = model::describe_group(topology, gpus);
    model::CollectiveRequest request;
    request.op = m.op;
    request.bytes = m.bytes;
    request.algorithm = m.algorithm;  // what ran, when known (else NCCL's pick)
    if (m.algorithm) request.allowed = model::AlgorithmSet::all;
    const model::CollectiveEstimate estimate = model::estimate_collective(group, request);
    CaseResult result{
        m,
        {},
        std::string(model::to_string(estimate.chosen.algorithm)) + "/" + model::to_string(estimate.chosen.protocol)};
    for (Engine engine : engines) {
      result.predicted_s[engine] =
          engine == Engine::model ? estimate.chosen.time_s : simulated_s(topology, group, m, estimate.chosen);
    }
    results.push_back(std::move(result));
  }
  return results;
}

void check_ranks_fit(int ranks, int gpus, const std::string& file) {
  if (ranks > gpus) {
    throw topologies::InputError(file + ": " + std::to_string(ranks) + " ranks, the cluster has " +
                                 std::to_string(gpus) + " GPUs (try --nodes)");
  }
}

ErrorSummary summary_of(Engine engine, const std::string& operation, const std::vector<double>& abs_errors) {
  return {engine,
          operation,
          static_cast<int>(abs_errors.size()),
          model::percentile(abs_errors, 0.5),
          model::percentile(abs_errors, 0.9),
          *std::max_element(abs_errors.begin(), abs_errors.end()),
          std::nullopt};
}

std::vector<ErrorSummary> summarise(const std::vector<CaseResult>& cases, const std::vector<Engine>& engines) {
  std::vector<ErrorSummary> summaries;
  for (Engine engine : engines) {
    std::map<std::string, std::vector<double>> errors;  // operation -> |relative error|
    for (const CaseResult& c : cases) errors[model::to_string(c.measured.op)].push_back(std::abs(c.error(engine)));
    for (const auto& [operation, values] : errors) summaries.push_back(summary_of(engine, operation, values));
  }
  return summaries;
}

}  // namespace treering::validate
