// Flow-level simulation of transfers between GPUs on a cluster's topology graph, with SimGrid: every
// directed link of the graph is a SimGrid link at its effective bandwidth (nominal x the model's tier
// efficiency), routes are the graph's own (D-mod-k), and concurrent flows share links max-min fairly.
// This is the engine the replay of decode plans is built on.
#pragma once

#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::sim {

struct Flow {
  int src_gpu = 0;
  int dst_gpu = 0;
  double bytes = 0;
  double start_s = 0;       // when the flow is posted
  double latency_s = 0;     // waited before its bytes move (software and device latency, as the caller models it)
  double max_rate_Bps = 0;  // 0: as fast as its links let it; else never faster (a calibrated rate, or what the
                            // sending GPU's threads drive), leaving the rest of its links to others
};

struct FlowSimulation {
  std::vector<double> finish_s;    // per flow: when its last byte arrived
  std::vector<double> link_bytes;  // per topology link (LinkId): bytes that crossed it, counted from the routes
  double makespan_s = 0;           // the last finish
};

// Runs in a child process (SimGrid keeps one engine per process and its clock does not restart), so any
// number of simulations can run from one program. Throws std::invalid_argument for a GPU index out of range
// or negative sizes and times; std::runtime_error if the simulator fails.
FlowSimulation simulate_flows(const topologies::Topology& topology, const std::vector<Flow>& flows);

}  // namespace treering::sim
