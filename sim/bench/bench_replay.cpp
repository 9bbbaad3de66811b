// How fast and how large the simulator's replays are (`make bench`): the cases on dgx-h100 clusters,
// each measured in a process of its own (wall time, transfers simulated, cost per transfer, the simulator
// process's peak memory). Prints figures; asserts nothing.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "treering/sim/flows.hpp"
#include "treering/model/layout_model.hpp"
#include "treering/sim/layout_replay.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Peak resident memory of this process and of the simulator processes it forked, MB.
double peak_mb() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return static_cast<double>(std::max(self.ru_maxrss, children.ru_maxrss)) / 1024.0;
}

// How a case is replayed: our event loop or SimGrid's network, with the replay's shortcuts (the steady ring's rounds
// skipped, rings whose blocks share no link computed round by round, one of identical groups for all) or every event.
enum class Engine { events, events_full, simgrid, simgrid_full };

const char* engine_name(Engine engine) {
  switch (engine) {
    case Engine::events: return "ev";
    case Engine::events_full: return "ev-full";
    case Engine::simgrid: return "sg";
    case Engine::simgrid_full: return "sg-full";
  }
  return "?";
}

struct Case {
  const char* algorithm;
  int nodes;
  long long seq_len;
  Engine engine;
  int tp = 1;  // > 1: a TP x CP layout, every CP group at once (sim::replay_layout)
  int replicas = 1;
  const char* cluster = "dgx-h100";
  std::vector<topologies::Setting> settings = {};
};

void replay_case(const Case& c) {
  const topologies::Topology topology = topologies::build_topology(c.cluster, {c.nodes, std::nullopt, c.settings});
  const model::DecodeAlgorithm algorithm = model::parse_decode_algorithm(c.algorithm);
  const model::Workload workload = model::find_workload("paper-mha16");
  const int gpus = topology.gpu_count() / c.replicas;
  const model::LayoutModel layouts(topology, model::place_layout(topology, {c.tp, gpus / c.tp, c.replicas}));
  const double predicted_s = layouts.attention(algorithm, workload, c.seq_len).slowest.latency_s;
  sim::ReplayOptions options;
  options.skip_steady_rounds = c.engine == Engine::events || c.engine == Engine::simgrid;
  options.one_of_identical = options.skip_steady_rounds;
  options.in_simgrid = c.engine == Engine::simgrid || c.engine == Engine::simgrid_full;
  const auto start = std::chrono::steady_clock::now();
  sim::ReplayResult replay;
  try {
    replay = sim::replay_layout(layouts, algorithm, workload, c.seq_len, {}, std::nullopt, options).replay;
  } catch (const std::exception& error) {
    std::printf("%-16s %6d %9lld %-7s  refused: %s\n", c.algorithm, topology.gpu_count(), c.seq_len,
                engine_name(c.engine), error.what());
    return;
  }
  const double wall_s = seconds_since(start);
  const std::string layout = c.tp > 1 ? std::to_string(c.tp) + "x" + std::to_string(gpus / c.tp) +
                                            (c.replicas > 1 ? "x" + std::to_string(c.replicas) : "")
                                      : "cp";
  std::printf("%-16s %6d %9lld %-9s %-7s %5d/%-5d %10lld %8.2f s %7.2f us %7.0f MB   %+.3f %%   %.17g\n", c.algorithm,
              topology.gpu_count(), c.seq_len, layout.c_str(), engine_name(c.engine), replay.groups_replayed,
              replay.groups, replay.transfers_simulated, wall_s,
              1e6 * wall_s / std::max(1LL, replay.transfers_simulated), peak_mb(),
              100 * (replay.latency_s - predicted_s) / predicted_s, replay.latency_s);
}

void platform_case(int nodes) {
  const auto start = std::chrono::steady_clock::now();
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
  const double graph_s = seconds_since(start);
  const sim::FlowSimulation one = sim::simulate_flows(topology, {{0, topology.gpu_count() - 1, 1e6, 0, 0}});
  std::printf(
      "platform: %d nodes (%d GPUs): graph %.2f s, SimGrid platform built and one flow run %.2f s, "
      "%.0f MB (simulated %.3g s)\n",
      nodes, topology.gpu_count(), graph_s, seconds_since(start) - graph_s, peak_mb(), one.makespan_s);
}

// Each case in a fresh process, so that its peak memory is its own.
template <typename Body>
void isolated(Body body) {
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    body();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::printf("  (case failed, status %d)\n", status);
}

}  // namespace

int main() {
  isolated([] { platform_case(2048); });
  std::printf("\n%-16s %6s %9s %-9s %-7s %11s %10s %10s %10s %10s   %-9s   %s\n", "algorithm", "GPUs", "tokens",
              "layout", "engine", "groups", "transfers", "wall", "/transfer", "peak", "vs model",
              "simulated latency (s)");
  using E = Engine;
  const std::vector<topologies::Setting> radix128{{"network.switch_radix", "128"}};
  const std::vector<topologies::Setting> one_nic{
      {"nics.count", "1"},        {"nics.gpu_to_nic.1", "0"}, {"nics.gpu_to_nic.2", "0"}, {"nics.gpu_to_nic.3", "0"},
      {"nics.gpu_to_nic.4", "0"}, {"nics.gpu_to_nic.5", "0"}, {"nics.gpu_to_nic.6", "0"}, {"nics.gpu_to_nic.7", "0"}};
  const std::string fat_tree = std::string(TREERING_SOURCE_DIR) + "/topologies/examples/h100-fat-tree.yaml";
  const std::vector<topologies::Setting> spine3{{"network.oversubscription", "3"}, {"network.switch_radix", "32"}};
  // The targets: the tree on 131,072 GPUs; TP8 x CP16 on 16,384 GPUs, all 1,024 groups; the uneven ring
  // on 4,096 GPUs (1M tokens, 244.14 a GPU). Then the whole-cluster cases with links shared (one NIC a node, a
  // 3:1 spine), both engines, every group and every event; and the single-group cases of before.
  for (const Case& c : std::vector<Case>{{"tree", 16384, 1000000, E::events, 1, 1, "dgx-h100", radix128},
                                         {"tree", 16384, 1000000, E::simgrid, 1, 1, "dgx-h100", radix128},
                                         {"ring", 2048, 1000000, E::events, 8, 128},
                                         {"ring", 2048, 1000000, E::events_full, 8, 128},
                                         {"ring", 2048, 1000000, E::simgrid_full, 8, 128},
                                         {"ring", 512, 1000000, E::events},
                                         {"ring", 512, 1000000, E::simgrid},
                                         {"ring", 512, 1000000, E::events_full},
                                         {"ring", 4, 1000000, E::events_full, 8, 1, "dgx-h100", one_nic},
                                         {"ring", 4, 1000000, E::simgrid_full, 8, 1, "dgx-h100", one_nic},
                                         {"ring", 128, 1000003, E::events_full, 8, 1, fat_tree.c_str(), spine3},
                                         {"ring", 128, 1000003, E::simgrid_full, 8, 1, fat_tree.c_str(), spine3},
                                         {"tree", 128, 1000003, E::events_full, 8, 1, fat_tree.c_str(), spine3},
                                         {"tree", 128, 1000003, E::simgrid_full, 8, 1, fat_tree.c_str(), spine3},
                                         {"ring", 128, 5120000, E::simgrid_full},
                                         {"ring", 128, 5120000, E::events_full},
                                         {"ring", 128, 5120000, E::events},
                                         {"ring", 128, 5120001, E::simgrid_full},
                                         {"ring", 128, 5120001, E::events_full},
                                         {"ring", 128, 5120001, E::events},
                                         {"pass-q", 128, 5120001, E::simgrid_full},
                                         {"pass-q", 128, 5120001, E::events_full},
                                         {"tree", 2048, 5120000, E::simgrid_full},
                                         {"tree", 2048, 5120000, E::events_full},
                                         {"tree-fused", 2048, 5120000, E::events_full},
                                         {"tree-lse", 2048, 5120000, E::events_full},
                                         {"allgather-merge", 2048, 5120000, E::events_full}}) {
    isolated([&] { replay_case(c); });
  }
  return 0;
}
