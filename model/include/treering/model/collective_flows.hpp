// How a collective's bytes travel: the point-to-point flows of the algorithm the model picked, for whoever
// replays it flow by flow (the simulator). Pure.
//
// A collective is replayed as its latency (the model's latency_s for the chosen algorithm and protocol: step
// latencies of a pipelined algorithm add up along its critical path, NCCL's model) followed by all of its flows
// at once, as a fluid: a pipelined algorithm keeps every edge busy for the whole transfer. Each flow carries
// the payload the algorithm moves over that edge (so that bytes per tier equal the model's volumes exactly) and
// `wire_bytes` >= payload, which adds the protocol's overhead (LL sends 16 bytes per 8 of data: x2; LL128
// x1/0.92) and, for in-switch reduction, the ratio of the pair bandwidth to the in-switch bandwidth.
//
// Patterns (n ranks in k domains of g; S bytes; "sent" = passes x (n-1)/n x S):
// - ring: C channels (when k > 1 and g > 1 one per NIC of a domain, fewer for buffers under 64 KiB each as
//   NCCL does; else 1); channel c visits every domain in
//   order, entering each at its member c x g / C; every edge carries sent / C. Alone on an NVSwitch (C = 1)
//   each GPU's port carries one flow: time = sent / bus bandwidth, the model's. Inside one full mesh (xGMI),
//   where the model's bus bandwidth is all of a GPU's links, each member sends sent / (n-1) to each other.
// - tree: NCCL's double binary tree per channel (channels as the ring's), two trees of S / 2C each: a chain
//   inside each domain (tree 0 towards the channel's first member of the domain, tree 1 towards its last) and
//   a binary tree over the domains (tree 1 mirrored, so a domain inner in one is a leaf in the other); every
//   edge carries S / 2C up (reduce) and S / 2C down (broadcast). An inner GPU of a chain then has four flows of S / 2
//   on its port: time 2 S / bandwidth, the model's (with g = 2 the two GPUs carry two flows each and finish in S /
//   bandwidth: the model's charge of 2 S is NCCL's, conservative there).
// - nvls: each member sends S to the next in its domain through the switch (wire scaled to the in-switch rate).
// - nvls-tree: nvls inside domains, and per rail l (the l-th member of each domain) a ring all-reduce of S / g
//   over the domains: 2 (k-1)/k x S/g per GPU, the model's network volume (wire scaled to its network time).
// - hierarchical: a ring all-reduce of S inside each domain, and per rail a ring all-reduce of S / g across.
// - reduced in the network (SHARP: nvls across domains, collnet-direct, collnet-chain): inside each domain nvls's
//   flows, or a ring of 2 (g-1)/g x S (direct; chain with wire x g/(g-1): its 2 S of time), the model's bytes and
//   time; across, per rail a ring
//   of S / g over the domains, as each GPU's S / g goes up to the switches and comes back reduced.
// - recursive doubling (n a power of two): log2 n exchanges with the partner at distance n/2, n/4, ... of S/2,
//   S/4, ... per pass.
// - broadcast: a chain (ring) or a binary tree over the ranks, S per edge; send/recv: one flow.
// - all-to-all: every rank sends S / n to every other (LL's wire inside a domain up to 16 KiB per peer).
//
// Where the model's transfer is slower than the links (NCCL's protocol caps, tree correction, fewer channels,
// or a calibration: CollectiveCandidate::processing_s > 0), every flow is capped at wire_bytes / transfer_s:
// alone, the collective then takes the model's transfer time; beside other traffic its links keep what it
// cannot use. Example: tree/LL all-reduce of 4 KiB on 2 x 8 H100 (dgx-h100): the model's transfer is
// 2 x 4096 B / 1.706 GB/s = 4.80 us (LL's bus rate over 1 of 16 channels); its flows (one channel, two trees of
// 2 KiB, 4 KiB of LL wire per edge) are each capped at 4096 B / 4.80 us = 853 MB/s, where an NVSwitch port
// alone would move them in 11 ns.
#pragma once

#include <vector>

#include "treering/model/collectives.hpp"

namespace treering::model {

struct CollectiveFlow {
  int from = 0;  // ranks of the group
  int to = 0;
  double bytes = 0;         // payload
  double wire_bytes = 0;    // what the flow costs on its links
  double max_rate_Bps = 0;  // of wire bytes; 0: none (the links set its rate)
};

struct CollectiveSchedule {
  CollectiveCandidate chosen;  // the model's pick: algorithm, protocol, latency_s, ...
  std::vector<CollectiveFlow> flows;
};

// The flows of `chosen` (a candidate estimate_collective returned for this group and request) for a group
// whose rank r lies in domain `domain_of_rank[r]` (any labels; ranks of one domain in rank order).
// Throws std::logic_error when the sizes disagree, InputError when the algorithm cannot run on the group.
CollectiveSchedule collective_schedule(const CommGroup& group, const std::vector<int>& domain_of_rank, CollectiveOp op,
                                       double bytes, const CollectiveCandidate& chosen);

}  // namespace treering::model
