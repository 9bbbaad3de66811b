// The simulator refuses, with the figures, a replay that would not fit in the memory it may use.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE("a replay over its memory budget is refused before it starts, naming both figures") {
  // One DGX H100, the ring: no collective flows; 64 MB + 8 ranks x 64 kB = 64.51 MB estimated.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(model::DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 80000);
  ::setenv("TREERING_MEMORY_BYTES", "10e6", 1);
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, plan), doctest::Contains("would need about 64.51 MB of memory and 10 MB is available"),
                       std::invalid_argument);
  ::setenv("TREERING_MEMORY_BYTES", "100e6", 1);
  CHECK(sim::replay_plan(model, plan).latency_s > 0);
  ::unsetenv("TREERING_MEMORY_BYTES");
}

namespace {

// The replay's memory estimate, as the refusal states it ("would need about 130.1 MB"), in bytes.
double estimated_bytes(const model::DecodeModel& model, const model::DecodePlan& plan) {
  ::setenv("TREERING_MEMORY_BYTES", "1", 1);
  std::string message;
  try {
    sim::replay_plan(model, plan);
  } catch (const std::invalid_argument& error) {
    message = error.what();
  }
  ::unsetenv("TREERING_MEMORY_BYTES");
  const std::size_t at = message.find("would need about ");
  REQUIRE(at != std::string::npos);
  char unit[8] = {};
  double value = 0;
  REQUIRE(std::sscanf(message.c_str() + at, "would need about %lf %7s", &value, unit) == 2);
  const std::string prefix(unit);
  return value * (prefix == "GB" ? 1e9 : prefix == "MB" ? 1e6 : prefix == "kB" ? 1e3 : 1.0);
}

// The peak resident bytes of the process that simulated `plan` (replay_plan's child), measured from a fresh
// process of ours so that no earlier child counts: getrusage(RUSAGE_CHILDREN) there sees only that one.
double measured_peak_bytes(const model::DecodeModel& model, const model::DecodePlan& plan) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    double peak_bytes = -1;
    try {
      sim::replay_plan(model, plan, {false, true, {}, true});  // SimGrid's actors, whose memory the estimate is for
      rusage usage{};
      ::getrusage(RUSAGE_CHILDREN, &usage);
      peak_bytes = static_cast<double>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
    } catch (...) {
    }
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
  // What each further rank costs, measured: the ring (steady rounds skipped) on 256 and on 1,024 GPUs. The process
  // as a whole carries the test binary's own pages, so the comparison is of the growth, 768 ranks' worth, against
  // the estimate's (64 kB a rank; sim/README.md measured ~46 kB). Memory, not time: no machine makes this flaky.
  const model::Workload workload = model::find_workload("paper-mha16");
  const topologies::Topology small_topology = topologies::build_topology("dgx-h100", {32, {}});
  const topologies::Topology large_topology = topologies::build_topology("dgx-h100", {128, {}});
  const model::DecodeModel small(small_topology), large(large_topology);
  const model::DecodePlan small_plan = small.plan(model::DecodeAlgorithm::ring, workload, 5'120'000);
  const model::DecodePlan large_plan = large.plan(model::DecodeAlgorithm::ring, workload, 5'120'000);
  const double estimated_growth = estimated_bytes(large, large_plan) - estimated_bytes(small, small_plan);
  const double measured_growth = measured_peak_bytes(large, large_plan) - measured_peak_bytes(small, small_plan);
  MESSAGE("768 more ranks: measured " << measured_growth / 1e6 << " MB, estimated " << estimated_growth / 1e6 << " MB");
  CHECK(estimated_growth == doctest::Approx(768 * 64e3).epsilon(0.01));  // the rule: 64 kB a rank (no collectives)
  CHECK(measured_growth > 0);
  CHECK(measured_growth < estimated_growth);
}
