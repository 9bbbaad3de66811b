// The flow simulator: exact alone, fair when sharing, any number of runs per process.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <unistd.h>
#include <stdexcept>

#include "treering/sim/flows.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

topologies::Topology preset(const std::string& name, int nodes) {
  return topologies::build_topology(name, {nodes, {}});
}

sim::Flow flow(int src, int dst, double bytes, double start_s = 0, double latency_s = 0) {
  return {src, dst, bytes, start_s, latency_s};
}

}  // namespace

TEST_CASE("a flow alone takes latency + bytes / effective bottleneck, to 1e-9") {
  const topologies::Topology topology = preset("dgx-h100", 2);
  // Across nodes: every link of GPU 0 -> NIC 0 -> leaf -> NIC 8 -> GPU 8 is 50 GB/s x 0.92 = 46 GB/s.
  // Inside a node: the NVSwitch ports, 450 GB/s x 0.80 = 360 GB/s.
  const sim::FlowSimulation result =
      sim::simulate_flows(topology, {flow(0, 8, 1e9, 0, 22.4e-6), flow(1, 2, 1e9, 0, 11.8e-6)});
  CHECK(result.finish_s[0] == doctest::Approx(22.4e-6 + 1e9 / 46e9).scale(1e-12).epsilon(1e-9));
  CHECK(result.finish_s[1] == doctest::Approx(11.8e-6 + 1e9 / 360e9).scale(1e-12).epsilon(1e-9));
  CHECK(result.makespan_s == result.finish_s[0]);
}

TEST_CASE("two flows through one NIC share it fairly") {
  // rtx4090-pcie: one 100 Gb/s NIC per box, 12.5 GB/s x 0.92 = 11.5 GB/s effective, the slowest link of both
  // routes (GPU 0 -> GPU 8 and GPU 1 -> GPU 9). Together each gets 5.75 GB/s: 1 GB in 0.173913 s.
  const topologies::Topology topology = preset("rtx4090-pcie", 2);
  const sim::FlowSimulation together = sim::simulate_flows(topology, {flow(0, 8, 1e9), flow(1, 9, 1e9)});
  CHECK(together.finish_s[0] == doctest::Approx(1e9 / 5.75e9).scale(1e-12).epsilon(1e-9));
  CHECK(together.finish_s[1] == doctest::Approx(1e9 / 5.75e9).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("staggered sharing, whatever each flow's latency") {
  // A (2 GB) starts at 0 and is alone until B (1 GB) starts moving at 0.1 s: 1.15 GB sent. Then they share
  // 5.75 GB/s each: A's last 0.85 GB take 0.147826 s (A ends at 0.247826 s), while B sends 0.85 GB; B's
  // last 0.15 GB alone at 11.5 GB/s take 0.0130435 s (B ends at 0.2608696 s). B is posted at 0.05 s with
  // 0.05 s of latency: links carry no latency, so the share does not depend on it (SimGrid's default would).
  const topologies::Topology topology = preset("rtx4090-pcie", 2);
  const sim::FlowSimulation result = sim::simulate_flows(topology, {flow(0, 8, 2e9), flow(1, 9, 1e9, 0.05, 0.05)});
  CHECK(result.finish_s[0] == doctest::Approx(0.1 + 0.85e9 / 5.75e9).scale(1e-12).epsilon(1e-9));
  CHECK(result.finish_s[1] == doctest::Approx(0.1 + 0.85e9 / 5.75e9 + 0.15e9 / 11.5e9).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("bytes per link are counted from the routes") {
  const topologies::Topology topology = preset("rtx4090-pcie", 2);
  const sim::FlowSimulation result = sim::simulate_flows(topology, {flow(0, 8, 2e9), flow(1, 9, 1e9)});
  // Both routes climb box 0's host bridge to its NIC: that link carried 3 GB.
  double most = 0, total = 0;
  for (double bytes : result.link_bytes) {
    most = std::max(most, bytes);
    total += bytes;
  }
  CHECK(most == 3e9);
  // Every link of each route counted once: 2 GB x 8 links + 1 GB x 8 links.
  CHECK(total == 2e9 * 8 + 1e9 * 8);
}

TEST_CASE("runs repeat exactly within one process; bad flows are refused") {
  const topologies::Topology topology = preset("dgx-h100", 2);
  const double first = sim::simulate_flows(topology, {flow(0, 8, 1e6)}).makespan_s;
  const double second = sim::simulate_flows(topology, {flow(0, 8, 1e6)}).makespan_s;
  CHECK(first == second);
  CHECK(first == doctest::Approx(1e6 / 46e9).scale(1e-12).epsilon(1e-9));
  CHECK_THROWS_AS(sim::simulate_flows(topology, {flow(0, 16, 1)}), std::invalid_argument);
  CHECK_THROWS_AS(sim::simulate_flows(topology, {flow(0, 1, -1)}), std::invalid_argument);
  CHECK_THROWS_AS(sim::simulate_flows(topology, {flow(0, 1, 1, std::numeric_limits<double>::infinity())}),
                  std::invalid_argument);
  CHECK(sim::simulate_flows(topology, {}).makespan_s == 0.0);
}

TEST_CASE("output a program buffered before a simulation is not written twice") {
  // The child process inherits unwritten stdio buffers (and flushes stdout on its way out); simulate_flows
  // flushes them before it forks. Standard output goes to a file for the test, fully buffered.
  char path[] = "/tmp/treering-flush-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::fflush(stdout);
  const int saved = dup(1);
  dup2(fd, 1);
  std::setvbuf(stdout, nullptr, _IOFBF, 4096);
  std::fputs("once\n", stdout);  // buffered, not yet written
  const topologies::Topology topology = preset("dgx-h100", 1);
  sim::simulate_flows(topology, {flow(0, 1, 1e6)});
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  char text[64] = {};
  const ssize_t got = pread(fd, text, sizeof text - 1, 0);
  close(fd);
  std::remove(path);
  CHECK(std::string(text, got > 0 ? static_cast<size_t>(got) : 0) == "once\n");
}

TEST_CASE("a capped flow moves at its cap and leaves the rest of the link to its neighbour") {
  // rtx4090-pcie, 2 boxes: both routes cross box 0's 11.5 GB/s NIC. Flow A (1 GB) is capped at 2 GB/s (a
  // calibrated rate, say): A takes 0.5 s; B (1 GB) gets the 9.5 GB/s left: 0.105263 s. Inflating A's size to
  // 5.75 GB instead would have halved B's share (0.173913 s).
  const topologies::Topology topology = preset("rtx4090-pcie", 2);
  sim::Flow capped = flow(0, 8, 1e9);
  capped.max_rate_Bps = 2e9;
  const sim::FlowSimulation result = sim::simulate_flows(topology, {capped, flow(1, 9, 1e9)});
  CHECK(result.finish_s[0] == doctest::Approx(1e9 / 2e9).scale(1e-12).epsilon(1e-9));
  CHECK(result.finish_s[1] == doctest::Approx(1e9 / 9.5e9).scale(1e-12).epsilon(1e-9));
}
