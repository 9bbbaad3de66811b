// What `treering topo show` reports about a cluster, computed from its graph.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::topologies {

struct RouteSummary {
  std::string from;  // device names
  std::string to;
  int hops = 0;  // links crossed
  double latency_s = 0;
  double bottleneck_Bps = 0;
};

struct GroupSummary {
  std::string name;
  int count = 0;
  std::string gpu_model;
  std::string architecture;  // "hopper" or "unknown" (the file does not say)
  std::string host_cpu;      // "intel" or "unknown"
  int gpus_per_node = 0;
  std::string fabric;                // "nvswitch 450 GB/s per GPU, 0.6 us"
  std::string nics;                  // "8 x 400 Gb/s, 1 us" or "none"
  double scale_up_per_gpu_Bps = 0;   // what one GPU can send into its fabric
  double scale_out_per_gpu_Bps = 0;  // the node's NIC bandwidth divided by its GPUs
};

struct ClusterSummary {
  std::string name;
  std::string description;
  std::string source;
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 0;  // 0 when groups differ
  int domains = 0;        // scale-up domains
  int devices = 0;
  int links = 0;  // directed
  std::vector<GroupSummary> groups;
  std::string network;  // "rail-optimized, 2 levels, 64-port switches, 1:1, 130 ns per hop" or "none";
                        // the levels are those built (a small cluster may need only leaves)
  std::optional<RouteSummary> scale_up_route;   // GPU 0 -> GPU 1 when they share a domain
  std::optional<RouteSummary> scale_out_route;  // GPU 0 -> first GPU of domain 1
  std::optional<RouteSummary> farthest_route;   // GPU 0 -> the GPU with the slowest route from it
  double bisection_Bps = 0;
  bool calibrated = false;
};

ClusterSummary summarize(const Topology& topology);

}  // namespace treering::topologies
