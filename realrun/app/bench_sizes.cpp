#include "bench_sizes.hpp"

#include <set>
#include <stdexcept>

#include "plan_maker.hpp"
#include "treering/model/extrapolation.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::app {

std::vector<double> size_ladder(double largest_bytes) {
  std::vector<double> ladder{8};
  while (ladder.back() < largest_bytes) ladder.push_back(ladder.back() * 4);
  return ladder;
}

BenchSizes sizes_for_plans(const BenchOptions& options, int ranks) {
  if (options.kind == BenchKind::hbm)
    throw topologies::InputError("--for-plan sizes sendrecv, allreduce, allgather and attention; hbm takes --bytes");
  const PlanMaker plans(options.cluster, options.workload, options.batch, ranks, options.backend);
  model::PlanMeasures measures;
  for (const std::string& name : options.algorithms) {
    const model::DecodeAlgorithm algorithm = model::parse_decode_algorithm(name);
    for (long long seq_len : topologies::parse_token_counts(options.seq_len))
      model::add_measures(plans.plan(algorithm, seq_len), measures);
  }
  BenchSizes out;
  if (options.kind == BenchKind::attention) {
    if (measures.tokens.empty()) throw topologies::InputError("--for-plan: the plans run no attention kernel");
    std::set<long long> tokens = measures.tokens;
    if (tokens.size() == 1) tokens.insert(std::max(1LL, *tokens.begin() / 2));
    out.tokens.assign(tokens.begin(), tokens.end());
    return out;
  }
  std::set<double> used;
  if (options.kind == BenchKind::sendrecv) {
    used = measures.send_bytes;
  } else {
    const model::CollectiveOp op =
        options.kind == BenchKind::allreduce ? model::CollectiveOp::allreduce : model::CollectiveOp::allgather;
    if (measures.collective_bytes.count(op)) used = measures.collective_bytes.at(op);
  }
  if (used.empty()) {
    throw topologies::InputError("--for-plan: the plans (" + std::to_string(ranks) + " ranks) use no " +
                                 to_string(options.kind) + (ranks < 2 ? " (one rank communicates nothing)" : ""));
  }
  for (double ladder : size_ladder(*used.rbegin())) used.insert(ladder);
  out.bytes.assign(used.begin(), used.end());
  return out;
}

}  // namespace treering::realrun::app
