// A replay's link loads (sim/layout_replay.hpp): every loaded link in link order, and the busiest first. Bytes are
// set by hand on links of one tier and rate, so each utilisation is proportional to its bytes: twice the bytes,
// twice the utilisation, whatever the tier's efficiency.
#include <doctest/doctest.h>

#include "treering/sim/layout_replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE("link_loads gives the loaded links in order, busiest_links the most loaded first (ties by link id)") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, std::nullopt, {}});
  // The first three links of one tier and rate.
  std::vector<topologies::LinkId> same;
  for (topologies::LinkId id = 0; id < topology.link_count() && same.size() < 3; ++id) {
    const topologies::Link& link = topology.link(id);
    const topologies::Link& first = topology.link(same.empty() ? id : same.front());
    if (link.tier == first.tier && link.bandwidth_Bps == first.bandwidth_Bps) same.push_back(id);
  }
  REQUIRE(same.size() == 3);
  sim::ReplayResult replay;
  replay.latency_s = 1e-3;
  replay.link_bytes.assign(static_cast<std::size_t>(topology.link_count()), 0.0);
  replay.link_bytes[static_cast<std::size_t>(same[0])] = 1e6;
  replay.link_bytes[static_cast<std::size_t>(same[1])] = 2e6;
  replay.link_bytes[static_cast<std::size_t>(same[2])] = 1e6;

  const std::vector<sim::LinkLoad> loads = sim::link_loads(topology, replay);
  REQUIRE(loads.size() == 3);  // the unloaded links are left out
  CHECK(loads[0].link == same[0]);
  CHECK(loads[1].link == same[1]);
  CHECK(loads[2].link == same[2]);
  CHECK(loads[1].bytes == 2e6);
  CHECK(loads[0].utilisation > 0);
  CHECK(loads[1].utilisation == doctest::Approx(2 * loads[0].utilisation).scale(1e-12));
  CHECK(loads[2].utilisation == doctest::Approx(loads[0].utilisation).scale(1e-12));

  const std::vector<sim::LinkLoad> busiest = sim::busiest_links(topology, replay, 2);
  REQUIRE(busiest.size() == 2);
  CHECK(busiest[0].link == same[1]);  // twice the bytes
  CHECK(busiest[1].link == same[0]);  // a tie with same[2]: the lower id
  CHECK(sim::busiest_links(topology, replay, 10).size() == 3);
}
