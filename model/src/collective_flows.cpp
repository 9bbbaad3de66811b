// The flows of a collective algorithm (see collective_flows.hpp for the patterns and why).
#include "treering/model/collective_flows.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace treering::model {
namespace {

struct Layout {
  std::vector<std::vector<int>> domains;  // ranks of each domain, domains in order of their first rank
  std::vector<int> order;                 // the ranks domain by domain
  int ranks() const { return static_cast<int>(order.size()); }
  int domain_count() const { return static_cast<int>(domains.size()); }
  int smallest_domain() const {
    size_t smallest = domains.front().size();
    for (const auto& members : domains) smallest = std::min(smallest, members.size());
    return static_cast<int>(smallest);
  }
};

Layout layout_of(const std::vector<int>& domain_of_rank) {
  Layout layout;
  std::map<int, size_t> index_of_domain;
  for (int rank = 0; rank < static_cast<int>(domain_of_rank.size()); ++rank) {
    auto [it, added] = index_of_domain.try_emplace(domain_of_rank[static_cast<size_t>(rank)], layout.domains.size());
    if (added) layout.domains.emplace_back();
    layout.domains[it->second].push_back(rank);
  }
  for (const auto& members : layout.domains) layout.order.insert(layout.order.end(), members.begin(), members.end());
  return layout;
}

struct Flows {
  std::vector<CollectiveFlow> list;
  double wire_per_byte = 1;  // wire bytes per payload byte for the flows being added
  void add(int from, int to, double bytes) {
    if (from != to && bytes > 0) list.push_back({from, to, bytes, bytes * wire_per_byte});
  }
  // Every member sends `bytes` to the next, the last to the first.
  void ring(const std::vector<int>& members, double bytes) {
    if (members.size() < 2) return;
    for (size_t i = 0; i < members.size(); ++i) add(members[i], members[(i + 1) % members.size()], bytes);
  }
};

// Inside one full mesh the rings of NCCL/RCCL cover every link: each member sends sent / (n-1) straight to each
// other member, the same bytes over all of its links at once.
void direct(const Layout& layout, double sent, Flows& flows) {
  const auto& members = layout.order;
  const double per_peer = sent / static_cast<double>(members.size() - 1);
  for (int from : members) {
    for (int to : members) flows.add(from, to, per_peer);
  }
}

// Ring channels: one per NIC of a domain across domains (NCCL's rings leave each node through every NIC),
// else one. Channel c enters domain d at its member c x g_d / C and leaves from the member before it.
// NCCL spreads a collective over channels, one per NIC across domains, but lowers their count for small
// buffers (each channel needs enough work for its threads); here one channel per 64 KiB of buffer, at least one.
// A decode's all-reduces of a few kilobytes then run on one channel, as NCCL's do.
constexpr double kBytesPerChannel = 65536;

int channel_count(const CommGroup& group, const Layout& layout, double S) {
  const double nics = group.scale_out_nic_Bps > 0 ? group.scale_out_domain_Bps / group.scale_out_nic_Bps : 1.0;
  const bool across = layout.domain_count() > 1 && layout.smallest_domain() > 1;
  if (!across) return 1;
  const int most = std::clamp(static_cast<int>(nics + 0.5), 1, layout.smallest_domain());
  return std::clamp(static_cast<int>(S / kBytesPerChannel), 1, most);
}

// The members of a domain as channel c of C sees them: starting at member c x g / C.
std::vector<int> rotated(const std::vector<int>& members, int channel, int channels) {
  const size_t g = members.size();
  const size_t start = static_cast<size_t>(channel) * g / static_cast<size_t>(channels);
  std::vector<int> order;
  for (size_t j = 0; j < g; ++j) order.push_back(members[(start + j) % g]);
  return order;
}

void ring_channels(const CommGroup& group, const Layout& layout, double S, double sent, Flows& flows) {
  if (group.mesh && layout.domain_count() == 1) return direct(layout, sent, flows);
  const int channels = channel_count(group, layout, S);
  for (int c = 0; c < channels; ++c) {
    std::vector<int> order;
    for (const auto& members : layout.domains) {
      const std::vector<int> turn = rotated(members, c, channels);
      order.insert(order.end(), turn.begin(), turn.end());
    }
    flows.ring(order, sent / channels);
  }
}

// The l-th member of every domain, for each l below the smallest domain's size.
void rail_rings(const Layout& layout, double bytes, Flows& flows) {
  for (int rail = 0; rail < layout.smallest_domain(); ++rail) {
    std::vector<int> members;
    for (const auto& domain : layout.domains) members.push_back(domain[static_cast<size_t>(rail)]);
    flows.ring(members, bytes);
  }
}

void both_ways(Flows& flows, int child, int parent, double bytes) {
  flows.add(child, parent, bytes);  // reduce
  flows.add(parent, child, bytes);  // broadcast
}

// Per channel (as the ring's: one per NIC across domains), two trees of S / 2C: chains inside the domains
// towards the channel's first member (tree 0) or its last (tree 1), heap-ordered trees over the domains.
void double_binary_tree(const CommGroup& group, const Layout& layout, double S, Flows& flows) {
  const int k = layout.domain_count();
  const int channels = channel_count(group, layout, S);
  const double share = S / (2.0 * channels);
  for (int c = 0; c < channels; ++c) {
    std::vector<std::vector<int>> chains;
    for (const auto& members : layout.domains) chains.push_back(rotated(members, c, channels));
    for (int tree = 0; tree < 2; ++tree) {
      auto leader = [&](int position) {  // tree 1 takes the domains mirrored and leads by their last member
        const auto& chain = chains[static_cast<size_t>(tree == 0 ? position : k - 1 - position)];
        return tree == 0 ? chain.front() : chain.back();
      };
      for (const auto& chain : chains) {
        for (size_t i = 1; i < chain.size(); ++i) {
          if (tree == 0)
            both_ways(flows, chain[i], chain[i - 1], share);
          else
            both_ways(flows, chain[chain.size() - 1 - i], chain[chain.size() - i], share);
        }
      }
      for (int position = 1; position < k; ++position)
        both_ways(flows, leader(position), leader((position - 1) / 2), share);
    }
  }
}

// Exchanges at distance n/2, n/4, ..., 1 of S/2, S/4, ... per pass (n a power of two: the model refuses
// other counts).
void recursive_doubling(const Layout& layout, double S, double passes, Flows& flows) {
  const int n = layout.ranks();
  double share = S;
  for (int distance = n / 2; distance >= 1; distance /= 2) {
    share /= 2;
    for (int r = 0; r < n; ++r)
      flows.add(layout.order[static_cast<size_t>(r)], layout.order[static_cast<size_t>(r ^ distance)], passes * share);
  }
}

// Chains through the ranks (ring: per channel, as the ring's, a chain that enters each domain at the channel's
// member and carries S / C, so that across domains each NIC carries its share as NCCL's channels spread it), or a
// chain inside each domain from its first member and a binary tree over the domains' first members (tree, S per
// edge).
void broadcast(const CommGroup& group, const Layout& layout, CollectiveAlgorithm algorithm, double S, Flows& flows) {
  if (algorithm == CollectiveAlgorithm::ring) {
    const int channels = channel_count(group, layout, S);
    for (int c = 0; c < channels; ++c) {
      std::vector<int> order;
      for (const auto& members : layout.domains) {
        const std::vector<int> turn = rotated(members, c, channels);
        order.insert(order.end(), turn.begin(), turn.end());
      }
      for (size_t i = 1; i < order.size(); ++i) flows.add(order[i - 1], order[i], S / channels);
    }
    return;
  }
  for (const auto& members : layout.domains) {
    for (size_t i = 1; i < members.size(); ++i) flows.add(members[i - 1], members[i], S);
  }
  for (size_t d = 1; d < layout.domains.size(); ++d)
    flows.add(layout.domains[(d - 1) / 2].front(), layout.domains[d].front(), S);
}

// Every rank sends `per_peer` to every other: inside its domain with LL's wire (x2) up to NCCL's 16 KiB p2p LL
// threshold, else Simple (collectives.hpp).
void all_to_all(const Layout& layout, const std::vector<int>& domain_of_rank, double per_peer, Flows& flows) {
  for (int from : layout.order) {
    for (int to : layout.order) {
      const bool inside = domain_of_rank[static_cast<size_t>(from)] == domain_of_rank[static_cast<size_t>(to)];
      flows.wire_per_byte = inside && per_peer <= 16384 ? 1.0 / protocol_efficiency(Protocol::ll) : 1.0;
      flows.add(from, to, per_peer);
    }
  }
}

// The network's part of an all-reduce the switches reduce (SHARP): every GPU sends its S / g up and gets it back
// reduced, whatever the number of domains; as flows, per rail a ring of S / g over the domains (each NIC then
// sends and receives S / g), wire scaled so that alone they take the model's S / the domain's NIC rate.
void in_network_rails(const CommGroup& group, const Layout& layout, double S, double efficiency, Flows& flows) {
  const int g = group.ranks_per_domain;
  flows.wire_per_byte = g * group.scale_out_nic_Bps / (group.scale_out_domain_Bps * efficiency);
  rail_rings(layout, S / g, flows);
}

[[noreturn]] void cannot(CollectiveOp op, CollectiveAlgorithm algorithm) {
  throw topologies::InputError(std::string("no flows for ") + to_string(algorithm) + " " + to_string(op));
}

void allreduce(const CommGroup& group, const Layout& layout, CollectiveAlgorithm algorithm, double S, double efficiency,
               Flows& flows) {
  const int n = layout.ranks();
  const int k = layout.domain_count();
  const int g = group.ranks_per_domain;
  switch (algorithm) {
    case CollectiveAlgorithm::ring: return ring_channels(group, layout, S, 2.0 * (n - 1) / n * S, flows);
    case CollectiveAlgorithm::tree: return double_binary_tree(group, layout, S, flows);
    case CollectiveAlgorithm::recursive_doubling: return recursive_doubling(layout, S, 2, flows);
    case CollectiveAlgorithm::hierarchical:
      for (const auto& members : layout.domains) {
        flows.ring(members, 2.0 * (members.size() - 1) / members.size() * S);
      }
      return rail_rings(layout, 2.0 * (k - 1) / k * S / g, flows);
    case CollectiveAlgorithm::collnet_direct:
    case CollectiveAlgorithm::collnet_chain:
      // The model's 2 (g-1)/g x S a GPU inside; a chain takes 2 S of time for it (its wire stretched by g / (g-1)).
      if (algorithm == CollectiveAlgorithm::collnet_chain && g > 1) flows.wire_per_byte = g / ((g - 1.0) * efficiency);
      for (const auto& members : layout.domains) flows.ring(members, 2.0 * (g - 1) / g * S);
      return in_network_rails(group, layout, S, efficiency, flows);
    case CollectiveAlgorithm::nvls:
    case CollectiveAlgorithm::nvls_tree: {
      // In-switch: the pair rate over the in-switch rate, so that a flow alone takes S / in-switch rate.
      flows.wire_per_byte = group.scale_up_pair_Bps / (group.in_switch_Bps * efficiency);
      for (const auto& members : layout.domains) flows.ring(members, S);
      if (algorithm == CollectiveAlgorithm::nvls) {
        if (k > 1) in_network_rails(group, layout, S, efficiency, flows);  // across domains: SHARP
        return;
      }
      // Across domains, per rail: 2 (k-1)/k x S/g through one NIC, in the model's time of g of those through
      // the domain's NICs (the same when every GPU has its own NIC).
      flows.wire_per_byte = g * group.scale_out_nic_Bps / (group.scale_out_domain_Bps * efficiency);
      return rail_rings(layout, 2.0 * (k - 1) / k * S / g, flows);
    }
    case CollectiveAlgorithm::p2p: break;
  }
  cannot(CollectiveOp::allreduce, algorithm);
}

}  // namespace

CollectiveSchedule collective_schedule(const CommGroup& group, const std::vector<int>& domain_of_rank, CollectiveOp op,
                                       double bytes, const CollectiveCandidate& chosen) {
  if (static_cast<int>(domain_of_rank.size()) != group.ranks) {
    throw std::logic_error("collective_schedule: " + std::to_string(domain_of_rank.size()) +
                           " domain labels for a group of " + std::to_string(group.ranks));
  }
  CollectiveSchedule schedule{chosen, {}};
  if (group.ranks < 2 || bytes <= 0) return schedule;
  const Layout layout = layout_of(domain_of_rank);
  const double efficiency = protocol_efficiency(chosen.protocol);
  Flows flows;
  flows.wire_per_byte = 1.0 / efficiency;
  const int n = layout.ranks();
  switch (op) {
    case CollectiveOp::allreduce: allreduce(group, layout, chosen.algorithm, bytes, efficiency, flows); break;
    case CollectiveOp::allgather:
    case CollectiveOp::reduce_scatter:
      if (chosen.algorithm == CollectiveAlgorithm::ring)
        ring_channels(group, layout, bytes, double(n - 1) / n * bytes, flows);
      else if (chosen.algorithm == CollectiveAlgorithm::recursive_doubling)
        recursive_doubling(layout, bytes, 1, flows);
      else
        cannot(op, chosen.algorithm);
      break;
    case CollectiveOp::broadcast:
      if (chosen.algorithm != CollectiveAlgorithm::ring && chosen.algorithm != CollectiveAlgorithm::tree)
        cannot(op, chosen.algorithm);
      broadcast(group, layout, chosen.algorithm, bytes, flows);
      break;
    case CollectiveOp::sendrecv:
      if (chosen.algorithm != CollectiveAlgorithm::p2p) cannot(op, chosen.algorithm);
      flows.add(0, 1, bytes);
      break;
    case CollectiveOp::alltoall:
      if (chosen.algorithm != CollectiveAlgorithm::p2p) cannot(op, chosen.algorithm);
      all_to_all(layout, domain_of_rank, bytes / n, flows);
      break;
  }
  schedule.flows = std::move(flows.list);
  if (chosen.processing_s > 0 && chosen.transfer_s > 0) {  // slower than the links: a rate, not a delay
    for (CollectiveFlow& flow : schedule.flows) flow.max_rate_Bps = flow.wire_bytes / chosen.transfer_s;
  }
  return schedule;
}

}  // namespace treering::model
