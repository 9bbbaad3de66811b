// The step model's shared parts (step_parts.hpp).
#include "step_parts.hpp"

#include <algorithm>

#include "treering/model/link_sharing.hpp"

namespace treering::model::detail {

double part_s(const ComputeRates& rates, int kernels, double parameters, double weight_bytes, double tokens,
              double extra_bytes) {
  if (parameters <= 0 && extra_bytes <= 0) return 0.0;
  return kernels * rates.launch_s + std::max((parameters * weight_bytes + extra_bytes) / rates.hbm_Bps,
                                             2.0 * tokens * parameters / rates.peak_flops);
}

namespace {

// Whether groups of GPUs may share a link: some group spans scale-up domains or sits in a PCIe box (whose
// switch uplinks its members share with others); groups inside NVSwitch or mesh domains have ports of their own.
bool may_share_links(const topologies::Topology& topology, const std::vector<std::vector<int>>& groups) {
  for (const std::vector<int>& gpus : groups) {
    const int domain = topology.domain_of_gpu(gpus.front());
    for (int gpu : gpus) {
      if (topology.domain_of_gpu(gpu) != domain) return true;
    }
    const topologies::Fabric& fabric =
        topology.spec().groups[topology.node(topology.node_of_gpu(gpus.front())).group].fabric;
    if (fabric.type == topologies::FabricType::pcie) return true;
  }
  return false;
}

}  // namespace

// `post`'s collective, run by every post-attention group at once (`groups`): where they may share links, the
// slowest with what they share (link_sharing.hpp).
CollectiveTime collective_time(const topologies::Topology& topology, const CommGroup& post,
                               const std::vector<std::vector<int>>& groups, double bytes, CollectiveOp op) {
  if (post.ranks < 2 || bytes <= 0) return {};
  CollectiveRequest request;
  request.op = op;
  request.bytes = bytes;
  const CollectiveCandidate chosen = estimate_collective(post, request).chosen;
  const bool network_latency = post.domains > 1 && chosen.latency_s >= chosen.transfer_s;
  double time_s = chosen.time_s;
  if (groups.size() > 1 && may_share_links(topology, groups))
    time_s = concurrent_collective_s(topology, groups, op, bytes);
  return {time_s, network_latency ? time_s : 0.0};
}

}  // namespace treering::model::detail
