// How the flow simulator scales (`make bench`): one ring round of decode traffic, every GPU sending a K/V
// block to the next at once, on dgx-h100 clusters of growing size. Prints figures; asserts nothing.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "treering/sim/flows.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

int main() {
  for (int nodes : {128, 512, 2048}) {
    topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
    topologies::apply_overrides(spec, {nodes, std::nullopt});
    const topologies::Topology topology(spec);
    std::vector<sim::Flow> flows;
    for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) {
      flows.push_back({gpu, (gpu + 1) % topology.gpu_count(), 64e6, 0, 0});
    }
    const auto start = std::chrono::steady_clock::now();
    const sim::FlowSimulation result = sim::simulate_flows(topology, flows);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage child{};
    getrusage(RUSAGE_CHILDREN, &child);
    std::printf(
        "ring round on %d GPUs: %zu flows in %.3f s wall (%.2f us per flow), simulated %.6g s; "
        "largest simulator process so far %.0f MB\n",
        topology.gpu_count(), flows.size(), wall_s, 1e6 * wall_s / flows.size(), result.makespan_s,
        child.ru_maxrss / 1024.0);
  }
  return 0;
}
