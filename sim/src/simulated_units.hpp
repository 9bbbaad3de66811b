// Sizes and rates as the simulators count them (SimGrid's platform, platform.hpp, and our own event loop,
// event_network.hpp): both must turn a transfer into the same number of units at the same rate. Private to sim.
#pragma once

#include <cmath>
#include <cstdint>

#include "treering/model/comm_group.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim {

// SimGrid counts transfer sizes in whole units: the platform's bandwidths and every size are in 1/1024 byte,
// so that fractional payloads (a ring all-reduce's 2 (n-1)/n x S, LL's wire bytes) are rounded to 0.001 B,
// not to 1 B (at 64 B collectives 1 B would be a 1e-7 relative error of the whole layer).
constexpr double kSizeUnitsPerByte = 1024;
inline uint64_t simulated_size(double bytes) { return static_cast<uint64_t>(std::llround(bytes * kSizeUnitsPerByte)); }

// A directed link's rate in units per second: its bandwidth at the cluster's (calibrated) efficiency, times the
// degradation's factor for it. E.g. an NDR link (50 GB/s) at 0.92 efficiency and factor 0.5: 23 GB/s, 23.552e12
// units/s.
inline double link_units_per_s(const topologies::Topology& topology, const model::LinkEfficiency& efficiency,
                               const Degradation* degradation, topologies::LinkId id) {
  const topologies::Link& link = topology.link(id);
  double bandwidth_Bps = link.bandwidth_Bps * efficiency.of(link);
  if (degradation) {
    const auto factor = degradation->link_bandwidth_factor.find(id);
    if (factor != degradation->link_bandwidth_factor.end()) bandwidth_Bps *= factor->second;
  }
  return bandwidth_Bps * kSizeUnitsPerByte;
}

}  // namespace treering::sim
