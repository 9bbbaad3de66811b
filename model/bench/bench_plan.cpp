// How fast the deployment planner ranks every layout and combine (`make bench`; the target is under 2 s for
// a 64-GPU cluster). Prints figures; asserts nothing.
#include <chrono>
#include <cstdio>
#include <optional>

#include "treering/model/planner.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

void bench(int nodes, const char* workload, long long seq_len, const char* cluster = "dgx-h100",
           std::optional<double> tpot_target_s = std::nullopt) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const topologies::Topology topology = topologies::build_topology(cluster, {nodes, {}});
  const auto built = clock::now();
  model::PlannerOptions options;
  options.tpot_target_s = tpot_target_s;
  const model::DeploymentPlan plan = model::plan_deployment(topology, model::find_workload(workload), seq_len, options);
  const auto done = clock::now();
  const size_t choices = plan.ranked.size() + plan.not_fitting.size() + plan.too_slow.size();
  // ranked puts a tie first; with a target the most tokens/s per GPU
  const model::PlannedLayout& best = tpot_target_s ? plan.ranked.front() : *model::fastest_choice(plan);
  std::printf(
      "plan %s x %d nodes (%d GPUs), %s at %lld tokens: topology %.3f s, %zu choices ranked in %.3f s "
      "(best: %s %s, %.2f ms per token, batch %d, %.0f tokens/s per GPU)\n",
      cluster, nodes, topology.gpu_count(), workload, seq_len, std::chrono::duration<double>(built - start).count(),
      choices, std::chrono::duration<double>(done - built).count(), model::layout_name(best.layout).c_str(),
      best.tp_only ? "tp only" : model::to_string(best.algorithm), best.step.step_s * 1e3, best.batch,
      best.tokens_per_s_per_gpu);
}

}  // namespace

int main() {
  bench(2, "llama3.1-70b", 131072);
  bench(8, "llama3.1-405b-fp8", 131072);  // 64 GPUs: the target
  bench(8, "llama3.1-405b-fp8", 1048576);
  bench(4, "deepseek-v3", 131072, "dgx-h200");  // latent attention: the engines' DCP and DP-attention layouts too
  // expert parallelism and a 50 ms target: each choice's largest batch searched (doubling, then bisection)
  bench(4, "deepseek-v3", 4096, "dgx-h200", 0.050);
  return 0;
}
