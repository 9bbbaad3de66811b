// The simulator refuses, with the figures, a replay that would not fit in the memory it may use.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// Options that give the replay a memory budget of its own (in SimGrid or the event loop), not the machine's.
sim::ReplayOptions with_budget(double budget_bytes, bool in_simgrid) {
  sim::ReplayOptions options;
  options.in_simgrid = in_simgrid;
  options.memory_budget_bytes = budget_bytes;
  return options;
}

}  // namespace

TEST_CASE("a replay over its memory budget is refused before it starts, naming both figures") {
  // One DGX H100, the ring: no collective flows; in the event loop 64 MB + 8 ranks x 16 kB = 64.13 MB
  // estimated, in SimGrid 40 kB more for each of the 8 ring transfers that may be under way at once:
  // 64 MB + 8 x 16 kB + 8 x 40 kB = 64.45 MB.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(model::DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 80000);
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, plan, with_budget(10e6, false)),
                       doctest::Contains("would need about 64.13 MB of memory and 10 MB is available"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, plan, with_budget(10e6, true)),
                       doctest::Contains("would need about 64.45 MB"), std::invalid_argument);
  CHECK(sim::replay_plan(model, plan, with_budget(100e6, false)).latency_s > 0);
}

namespace {

// The replay's memory estimate, as the refusal states it ("would need about 130.1 MB"), in bytes.
double estimated_bytes(const model::DecodeModel& model, const model::DecodePlan& plan, bool in_simgrid) {
  std::string message;
  try {
    sim::replay_plan(model, plan, with_budget(1, in_simgrid));
  } catch (const std::invalid_argument& error) {
    message = error.what();
  }
  const std::size_t at = message.find("would need about ");
  REQUIRE(at != std::string::npos);
  char unit[8] = {};
  double value = 0;
  REQUIRE(std::sscanf(message.c_str() + at, "would need about %lf %7s", &value, unit) == 2);
  const std::string prefix(unit);
  return value * (prefix == "GB" ? 1e9 : prefix == "MB" ? 1e6 : prefix == "kB" ? 1e3 : 1.0);
}

// The peak resident bytes of the process that simulated `plan`, measured from a fresh process of ours: in
// SimGrid's network, replay_plan's child (getrusage(RUSAGE_CHILDREN) there sees only that one); in the event
// loop, that process itself (its pages from this one count in both sizes alike: the growth is the replay's).
double measured_peak_bytes(const model::DecodeModel& model, const model::DecodePlan& plan, bool in_simgrid) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    double peak_bytes = -1;
    try {
      sim::replay_plan(model, plan, {false, true, {}, in_simgrid});
      rusage usage{};
      ::getrusage(in_simgrid ? RUSAGE_CHILDREN : RUSAGE_SELF, &usage);
      peak_bytes = static_cast<double>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
    } catch (...) {}
    const ssize_t written = ::write(fds[1], &peak_bytes, sizeof peak_bytes);
    ::_exit(written == sizeof peak_bytes ? 0 : 1);
  }
  ::close(fds[1]);
  double peak_bytes = -1;
  const ssize_t got = ::read(fds[0], &peak_bytes, sizeof peak_bytes);
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  REQUIRE(got == sizeof peak_bytes);
  REQUIRE(peak_bytes > 0);
  return peak_bytes;
}

// AddressSanitizer's shadow memory and redzones multiply what a process holds: the figures are for real builds.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

TEST_CASE("the memory estimate bounds what a replay's ranks really take" * doctest::skip(kSanitized)) {
  // What each further rank costs, measured: 256 and 1,024 GPUs. The process as a whole carries the test binary's
  // own pages, so the comparison is of the growth, 768 ranks' worth, against the estimate's: 16 kB a rank
  // (measured 4-6 kB in the event loop) and 256 B a collective flow in both, and in SimGrid 40 kB per flow that
  // may be under way at once (two actors with 16 kB stacks): the ring's p transfers, the tree's largest
  // all-reduce. Memory, not time: no machine makes this flaky.
  struct Case {
    model::DecodeAlgorithm algorithm;
    long long tokens;
    bool in_simgrid;
  };
  const model::Workload workload = model::find_workload("paper-mha16");
  const topologies::Topology small_topology = topologies::build_topology("dgx-h100", {32, {}});
  const topologies::Topology large_topology = topologies::build_topology("dgx-h100", {128, {}});
  const model::DecodeModel small(small_topology), large(large_topology);
  for (const Case& c :
       {Case{model::DecodeAlgorithm::ring, 5'120'000, true}, Case{model::DecodeAlgorithm::tree, 5'120'000, true},
        Case{model::DecodeAlgorithm::ring, 5'120'001, false},  // every round replayed
        Case{model::DecodeAlgorithm::tree, 5'120'000, false}}) {
    const model::DecodePlan small_plan = small.plan(c.algorithm, workload, c.tokens);
    const model::DecodePlan large_plan = large.plan(c.algorithm, workload, c.tokens);
    double added_flows = 0, added_under_way = 0;  // collective flows; the most under way at once
    for (int sign : {1, -1}) {
      const model::DecodeModel& model = sign > 0 ? large : small;
      const model::DecodePlan& plan = sign > 0 ? large_plan : small_plan;
      double most = static_cast<double>(plan.gpus.size());
      for (const model::Phase& phase : plan.phases) {
        if (phase.kind != model::PhaseKind::collective) continue;
        const double flows = static_cast<double>(model.collective_schedule(phase).flows.size());
        added_flows += sign * flows;
        most = std::max(most, flows);
      }
      added_under_way += sign * most;
    }
    const double estimated_growth =
        estimated_bytes(large, large_plan, c.in_simgrid) - estimated_bytes(small, small_plan, c.in_simgrid);
    const double measured_growth =
        measured_peak_bytes(large, large_plan, c.in_simgrid) - measured_peak_bytes(small, small_plan, c.in_simgrid);
    CAPTURE(std::string(model::to_string(c.algorithm)));
    CAPTURE(c.in_simgrid);
    const std::string replay =
        std::string(model::to_string(c.algorithm)) + (c.in_simgrid ? " in SimGrid" : " in the event loop");
    MESSAGE(replay << ", 768 more ranks: measured " << measured_growth / 1e6 << " MB, estimated "
                   << estimated_growth / 1e6 << " MB");
    CHECK(estimated_growth ==
          doctest::Approx(768 * 16e3 + 256 * added_flows + (c.in_simgrid ? 40e3 * added_under_way : 0.0))
              .scale(1e-12)
              .epsilon(0.01));
    CHECK(measured_growth > 0);
    CHECK(measured_growth < estimated_growth);
  }
}
