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

#include "treering/sim/flows.hpp"
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

// How a plan is replayed: our event loop or SimGrid's actors, with the ring's steady-state skip or without.
enum class Engine { events_skip, events_full, simgrid_skip, simgrid_full };

const char* engine_name(Engine engine) {
  switch (engine) {
    case Engine::events_skip: return "ev-skip";
    case Engine::events_full: return "ev-full";
    case Engine::simgrid_skip: return "sg-skip";
    case Engine::simgrid_full: return "sg-full";
  }
  return "?";
}

void replay_case(const char* algorithm, int nodes, long long seq_len, Engine engine) {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(model::parse_decode_algorithm(algorithm), model::find_workload("paper-mha16"), seq_len);
  const double predicted_s = model.evaluate(plan).latency_s;
  sim::ReplayOptions options;
  options.skip_steady_rounds = engine == Engine::events_skip || engine == Engine::simgrid_skip;
  options.in_simgrid = engine == Engine::simgrid_skip || engine == Engine::simgrid_full;
  const auto start = std::chrono::steady_clock::now();
  const sim::ReplayResult replay = sim::replay_plan(model, plan, options);
  const double wall_s = seconds_since(start);
  std::printf("%-16s %6d %9lld %-7s %10lld %8.2f s %7.2f us %7.0f MB   %+.3f %%   %.17g\n", algorithm, topology.gpu_count(),
              seq_len, engine_name(engine), replay.transfers_simulated, wall_s,
              1e6 * wall_s / std::max(1LL, replay.transfers_simulated), peak_mb(),
              100 * (replay.latency_s - predicted_s) / predicted_s, replay.latency_s);
}

void platform_case(int nodes) {
  const auto start = std::chrono::steady_clock::now();
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
  const double graph_s = seconds_since(start);
  const sim::FlowSimulation one = sim::simulate_flows(topology, {{0, topology.gpu_count() - 1, 1e6, 0, 0}});
  std::printf("platform: %d nodes (%d GPUs): graph %.2f s, SimGrid platform built and one flow run %.2f s, "
              "%.0f MB (simulated %.3g s)\n", nodes, topology.gpu_count(), graph_s, seconds_since(start) - graph_s,
              peak_mb(), one.makespan_s);
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
  std::printf("\n%-16s %6s %9s %-7s %10s %10s %10s %10s   %-9s   %s\n", "algorithm", "GPUs", "tokens", "engine", "transfers",
              "wall", "/transfer", "peak", "vs model", "simulated latency (s)");
  struct Case {
    const char* algorithm;
    int nodes;
    long long seq_len;
    Engine engine;
  };
  // 5.12M tokens split evenly up to 4,096 GPUs (1,250 each): the replay can skip the ring's repeated rounds
  // once steady; 5,120,001 tokens are uneven (one GPU holds a token more), so every round is replayed. Each
  // case by the event loop, and by SimGrid's actors where they take less than a minute or so, to compare (the
  // same latency to 1e-9, at what cost). The collectives at 16,384 GPUs, and pass-q (a ring of query blocks,
  // then an all-to-all) at 1,024, both ways.
  using E = Engine;
  for (const Case& c : {Case{"ring", 32, 5120000, E::simgrid_full}, Case{"ring", 32, 5120000, E::events_full},
                        Case{"ring", 128, 5120000, E::simgrid_full}, Case{"ring", 128, 5120000, E::events_full},
                        Case{"ring", 128, 5120000, E::simgrid_skip}, Case{"ring", 128, 5120000, E::events_skip},
                        Case{"ring", 512, 5120000, E::simgrid_skip}, Case{"ring", 512, 5120000, E::events_skip},
                        Case{"ring", 512, 5120000, E::events_full},
                        Case{"ring", 128, 5120001, E::simgrid_full}, Case{"ring", 128, 5120001, E::events_full},
                        Case{"ring", 512, 5120001, E::events_full},
                        Case{"pass-q", 128, 5120001, E::simgrid_full}, Case{"pass-q", 128, 5120001, E::events_full},
                        Case{"tree", 2048, 5120000, E::simgrid_full}, Case{"tree", 2048, 5120000, E::events_full},
                        Case{"tree-fused", 2048, 5120000, E::simgrid_full},
                        Case{"tree-fused", 2048, 5120000, E::events_full},
                        Case{"tree-lse", 2048, 5120000, E::simgrid_full}, Case{"tree-lse", 2048, 5120000, E::events_full},
                        Case{"allgather-merge", 2048, 5120000, E::simgrid_full},
                        Case{"allgather-merge", 2048, 5120000, E::events_full}}) {
    isolated([&] { replay_case(c.algorithm, c.nodes, c.seq_len, c.engine); });
  }
  return 0;
}
