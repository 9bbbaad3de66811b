#include "treering/analysis/crossover.hpp"

#include <cmath>
#include <numeric>

#include "treering/analysis/sweep.hpp"
#include "treering/model/plan.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::analysis {

std::optional<long long> wins_from(const std::vector<LengthOutcome>& by_length) {
  std::optional<long long> from;
  for (auto it = by_length.rbegin(); it != by_length.rend(); ++it) {  // longest first
    if (it->outcome == Outcome::no_contest) continue;
    if (it->outcome == Outcome::loses) break;
    from = it->seq_len;
  }
  return from;
}

void check_crossover_request(const CrossoverRequest& request) {
  auto at_least_one = [](const std::vector<int>& values, const std::string& what) {
    for (int value : values) {
      if (value < 1) throw topologies::InputError(what + " must be at least 1, got " + std::to_string(value));
    }
  };
  if (request.nodes.empty()) throw topologies::InputError("no node count given (nodes)");
  at_least_one(request.nodes, "nodes");
  at_least_one(request.batches, "batch");
  at_least_one({request.jobs}, "jobs");
  if (request.seq_lens.empty()) throw topologies::InputError("no context length given (seq_len)");
}

namespace {

// The shortest length from which the first wins at every longer length, for one GPU count; `surely`: also outside
// the other's band.
std::optional<long long> first_wins_from(const std::vector<CrossoverCell>& cells, int gpus, bool surely) {
  std::vector<LengthOutcome> by_length;
  for (const CrossoverCell& c : cells) {
    if (c.gpus != gpus) continue;
    by_length.push_back({c.seq_len, c.speedup() > 1 && !(surely && c.uncertain()) ? Outcome::wins : Outcome::loses});
  }
  return wins_from(by_length);
}

// The lengths at which the two lie within each other's band, for one GPU count, as runs of consecutive lengths.
std::vector<LengthRun> uncertain_runs(const std::vector<CrossoverCell>& cells, int gpus) {
  std::vector<LengthRun> runs;
  bool in_run = false;
  for (const CrossoverCell& c : cells) {
    if (c.gpus != gpus) continue;
    if (!c.uncertain()) {
      in_run = false;
    } else if (in_run) {
      runs.back().last = c.seq_len;
    } else {
      runs.push_back({c.seq_len, c.seq_len});
      in_run = true;
    }
  }
  return runs;
}

SweepSpec sweep_spec(const CrossoverRequest& request) {
  SweepSpec spec;
  spec.cluster = request.cluster;
  spec.nodes = request.nodes;
  spec.workloads = {request.workload};
  if (!request.batches.empty()) spec.batches = request.batches;
  spec.seq_lens = request.seq_lens;
  for (const std::string& name : request.algorithms) spec.algorithms.push_back(model::parse_decode_algorithm(name));
  spec.engines = {request.engine};
  spec.impl = request.impl;
  spec.settings = request.settings;
  return spec;
}

nlohmann::ordered_json bound_json(double seconds) {
  return std::isfinite(seconds) ? nlohmann::ordered_json(seconds) : nlohmann::ordered_json();
}

}  // namespace

CrossoverResult run_crossover(const CrossoverRequest& request) {
  if (request.batches.size() > 1) throw topologies::InputError("--batch takes one value here (several with --vs tp)");
  if (request.algorithms.size() != 2 || request.algorithms[0] == request.algorithms[1])
    throw topologies::InputError("--algo takes two different algorithms, e.g. tree,ring");
  check_crossover_request(request);
  const SweepSpec spec = sweep_spec(request);
  std::vector<std::size_t> all(sweep_cases(spec).size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  const std::vector<DecodeRow> rows = run_sweep(spec, all, request.jobs);  // per (nodes, length): first, second
  CrossoverResult result;
  result.first = request.algorithms[0];
  result.second = request.algorithms[1];
  result.seq_lens = spec.seq_lens;
  for (std::size_t i = 0; i + 1 < rows.size(); i += 2) {
    result.cells.push_back({rows[i].result.gpus, rows[i].result.seq_len, rows[i].result.latency_s,
                            rows[i + 1].result.latency_s, rows[i].latency_band, rows[i + 1].latency_band});
    const int gpus = result.cells.back().gpus;
    if (result.gpus.empty() || result.gpus.back() != gpus) result.gpus.push_back(gpus);
  }
  for (const DecodeRow& row : rows) result.errors.push_back(row.errors);
  for (int gpus : result.gpus) {
    result.summaries.push_back({gpus, first_wins_from(result.cells, gpus, false),
                                first_wins_from(result.cells, gpus, true), uncertain_runs(result.cells, gpus)});
  }
  return result;
}

nlohmann::ordered_json crossover_json(const CrossoverResult& result) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CrossoverCell& c : result.cells) {
    rows.push_back({{"gpus", c.gpus},
                    {"seq_len", c.seq_len},
                    {"first", result.first},
                    {"second", result.second},
                    {"first_latency_s", c.first_s},
                    {"second_latency_s", c.second_s},
                    {"speedup", c.speedup()},
                    {"winner", c.speedup() >= 1 ? result.first : result.second},
                    {"first_latency_s_low", c.first_band.low_s},
                    {"first_latency_s_high", bound_json(c.first_band.high_s)},
                    {"second_latency_s_low", c.second_band.low_s},
                    {"second_latency_s_high", bound_json(c.second_band.high_s)},
                    {"within_band", c.uncertain()}});
  }
  return rows;
}

}  // namespace treering::analysis
