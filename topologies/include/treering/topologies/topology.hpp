// The topology graph of a cluster: devices are vertices, directed links are edges (one per direction of
// each full-duplex cable). Stored as a Boost.Graph adjacency_list behind this interface; Boost headers stay
// inside the topologies module.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"

namespace treering::topologies {

enum class DeviceKind { gpu, nic, nvswitch, pcie_switch, host_bridge, network_switch };
enum class Tier { scale_up, scale_out };  // inside a node / NVLink domain; from the NIC outwards

const char* to_string(DeviceKind kind);
const char* to_string(Tier tier);

using DeviceId = int;
using LinkId = int;

struct Device {
  DeviceKind kind = DeviceKind::gpu;
  std::string name;      // "dgx-3/gpu5", "leaf2", "spine7", "pod1/agg3", "core2.9"
  int node = -1;         // global node index; -1 for devices outside nodes (network switches, NVLink domain switches)
  int domain = -1;       // scale-up domain; -1 for network switches
  int gpu = -1;          // global GPU index (GPUs only)
  int level = 0;         // network switches: 1 leaf, 2 spine/aggregation, 3 core
  double latency_s = 0;  // added to every route that passes through (not to routes that start or end here)
};

struct Link {
  DeviceId from = -1;
  DeviceId to = -1;
  double bandwidth_Bps = 0;
  double latency_s = 0;
  Tier tier = Tier::scale_up;
  LinkId reverse = -1;  // the other direction of the same cable
};

// A route between two GPUs: the directed links in order, its latency (links plus the devices passed
// through) and its bottleneck (the slowest link).
struct Route {
  std::vector<LinkId> links;
  double latency_s = 0;
  double bottleneck_Bps = 0;
};

struct NodeInfo {
  int group = 0;  // index into ClusterSpec::groups
  int index_in_group = 0;
  int domain = 0;
  int first_gpu = 0;  // GPUs of the node are first_gpu .. first_gpu + gpus - 1
  int gpus = 0;
  std::string name;  // "<group>-<index_in_group>"
};

class Topology {
 public:
  // Builds the graph and checks what only the graph can tell (network capacity, connectivity).
  // Throws InputError pointing at the group or network description at fault.
  explicit Topology(ClusterSpec spec);
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  const ClusterSpec& spec() const;
  int gpu_count() const;
  int node_count() const;
  int domain_count() const;
  int device_count() const;
  int link_count() const;
  const Device& device(DeviceId id) const;
  const Link& link(LinkId id) const;
  const NodeInfo& node(int node_index) const;
  DeviceId gpu_device(int gpu) const;
  int node_of_gpu(int gpu) const;
  int domain_of_gpu(int gpu) const;
  const std::vector<LinkId>& out_links(DeviceId id) const;

  // Deterministic route between two GPUs (empty route with zero latency for src == dst).
  // Throws std::out_of_range for GPU indices outside [0, gpu_count()).
  Route route(int src_gpu, int dst_gpu) const;
  // The same with cables out of service (`cables_down[link]` true for both directions of each; null: none): in
  // the network the D-mod-k choice skips them and switches that cannot reach the destination without them.
  // Throws std::invalid_argument when no route is left (a node's fabric or a GPU's NIC link has no alternative).
  Route route(int src_gpu, int dst_gpu, const std::vector<bool>* cables_down) const;
  // The route a GPU-initiated RDMA write takes (expert parallelism's low-latency kernels): out through the
  // source GPU's NIC and in through the destination's, even inside one node or to itself; between GPUs that share
  // a NIC, the NIC's loopback (to it and back, no switch). Throws InputError when either GPU has no NIC.
  Route route_through_nics(int src_gpu, int dst_gpu) const;
  // A device by its name ("dgx-h100-0/gpu3", "leaf2"); -1 when none has it.
  DeviceId find_device(const std::string& name) const;

  // Max-flow between GPUs [0, P/2) and [P/2, P) (node order), per direction; 0 for P < 2.
  double bisection_bandwidth_Bps() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Graphviz: one cluster box per node (and per multi-node NVLink domain), one edge per cable labelled
// with its bandwidth.
std::string to_dot(const Topology& topology);

}  // namespace treering::topologies
