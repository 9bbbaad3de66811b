// Evaluating decode plans on a cluster: latency with its breakdown, volume per tier, memory per GPU, and
// time per generated token. Pure (the topology is read, never changed).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "treering/model/collective_flows.hpp"
#include "treering/model/comm_group.hpp"
#include "treering/model/compute.hpp"
#include "treering/model/plan.hpp"

namespace treering::model {

struct GroupSharing;  // link_sharing.hpp

struct DecodeBreakdown {
  double compute_s = 0;                   // kernels on the critical path
  double intra_node_s = 0;                // exposed communication inside scale-up domains
  double inter_node_s = 0;                // exposed communication across domains
  double inter_node_latency_bound_s = 0;  // the part of inter_node_s whose latency is at least its transfer
  double overlapped_communication_s = 0;  // communication hidden behind compute (ring)
  double host_s = 0;                      // the GPU idle while the host catches up (implementation profile)
};

struct DecodeVolume {     // bytes sent, one attention layer
  double per_gpu = 0;     // the most any GPU sends
  double intra_node = 0;  // all GPUs together, over the scale-up fabric
  double inter_node = 0;  // all GPUs together, through NICs
  double total = 0;
};

struct DecodeMemory {          // bytes per GPU (the fullest GPU), the whole model
  double kv_cache = 0;         // all layers' K and V of the shard
  double receive_buffers = 0;  // ring: one incoming K/V block (double buffering)
  double partial_states = 0;   // q, o, lse and the states being merged
  double workspace = 0;        // collective buffers (all-gathered states, numerator/denominator)
  double weights = 0;          // model weights, replicated on every GPU
  double total = 0;
};

struct PhaseTime {
  std::string label;
  double time_s = 0;
  bool inter_node = false;
  std::string how;  // a collective's algorithm/protocol, "overlapped with compute", ...
};

struct DecodeResult {
  DecodeAlgorithm algorithm = DecodeAlgorithm::tree;
  long long seq_len = 0;
  int gpus = 0;
  int domains = 0;
  std::string impl = "efficient";  // the implementation profile it predicts
  double latency_s = 0;            // one attention layer: compute + exposed communication + host time
  DecodeBreakdown breakdown;
  DecodeVolume volume;
  DecodeMemory memory;
  double weights_s = 0;     // reading the weights once per token (every GPU holds them all), and launching the
                            // layers' other kernels (DecodePlan::other_kernels_per_layer)
  double token_s = 0;       // layers x latency_s + weights_s (a once-per-call host phase counted once)
  double first_call_s = 0;  // the once-per-call part of latency_s and token_s (a first call's compilation)
  std::vector<PhaseTime> phases;
};

// Holds what does not change between predictions on one cluster and set of GPUs (tier figures, compute
// rates, point-to-point costs), so that sweeps of many sequence lengths and algorithms stay cheap.
class DecodeModel {
 public:
  // `gpus`: the ranks' GPUs in ring order (all GPUs, node-contiguous, when empty).
  explicit DecodeModel(const topologies::Topology& topology, std::vector<int> gpus = {});

  DecodePlan plan(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                  const PlanOptions& options = {}) const;
  // `sharing`: what the links this group shares with the other groups of a layout cost it (link_sharing.hpp;
  // none: a group alone).
  DecodeResult evaluate(const DecodePlan& plan, const GroupSharing* sharing = nullptr) const;
  DecodeResult predict(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                       const PlanOptions& options = {}) const {
    return evaluate(plan(algorithm, workload, seq_len, options));
  }
  // Generating `tokens` tokens after a context of seq_len: the sum of token_s as the context grows, by the
  // trapezoid rule over its two ends (exact where token_s is linear in the context length).
  double generation_s(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len, long long tokens,
                      const PlanOptions& options = {}) const;
  // The prefill of the seq_len-token prompt, split over the ranks as context parallelism does (decode_prefill.cpp).
  // Without a prefill section in options.impl, a rough estimate, balanced and compute-bound at kPrefillEfficiency
  // of the slowest GPU's peak:
  //   FLOPs = b x (2 x parameters x N + 2 x layers x N^2 x n_h x d_h)   (weights; causal attention)
  // Example: llama3.1-8b, N = 128k, 16 H100: (2 x 8.03e9 x 128e3 + 2 x 32 x 128e3^2 x 4096) = 6.35e15 FLOP
  // -> / (16 x 989e12 x 0.5) = 0.80 s. Communication of the prefill is not modelled.
  // With one, the profile's schedule (ring_causal_skip_prefill_s below).
  double prefill_s(const Workload& workload, long long seq_len, const PlanOptions& options = {}) const;
  // The ring-causal-skip schedule (topologies::PrefillProfile): each rank projects its N/p tokens (weights as above,
  // at kPrefillEfficiency), then per layer p ring steps where the last rank attends to its diagonal block (causal:
  // 2 b (N/p)^2 n_h d_h FLOPs) and then p - 1 full blocks (4 b (N/p)^2 n_h d_h each) at `attention_efficiency` of
  // its peak, every step but the last lasting at least the slowest ring neighbour's send of the K/V block
  // (b N/p tokens x 2 x heads x d_h x e, heads = n_h under kv_expansion, else n_kv).
  // Example: llama3.1-8b, N = 64,000 on 8 H100 (block 8,000 tokens), efficiency 0.374: a full block 4 x 8000^2 x
  // 4096 = 1.049e12 FLOP / 369.9e12 = 2.835 ms, the diagonal 1.417 ms; a layer 1.417 + 7 x 2.835 = 21.26 ms (the
  // 131 MB expanded block crosses NVLink in ~2 ms, hidden), 32 layers 0.680 s; weights 2 x 8.03e9 x 8000 /
  // (989e12 x 0.5) = 0.260 s: 0.940 s, against 0.531 s by the balanced estimate.
  double ring_causal_skip_prefill_s(const Workload& workload, long long seq_len, double attention_efficiency,
                                    bool kv_expansion) const;

  const CommGroup& group() const { return group_; }
  // A collective phase as the model times it (NCCL's algorithms over all ranks, the fastest), and the flows
  // that algorithm moves, for replays (collective_flows.hpp).
  CollectiveEstimate collective(const Phase& phase) const;
  CollectiveSchedule collective_schedule(const Phase& phase) const;
  // Send/recv of `bytes` from rank a to rank b, alone on the network: latency + bytes / bandwidth, both from the
  // band that holds `bytes` when the cluster's calibration measured this tier's sends (calibration p2p), else
  // the send/recv model's (latency_s, bandwidth_Bps). The simulator's links carry bandwidth_Bps; a send in a
  // slower band is capped at the band's rate (rate_cap_Bps: alone it takes the band's time, and its links keep
  // the rest for others); one in a faster band travels as `bytes x size_factor(bytes)` (< 1) there.
  // Example: bands {0: 20 us, 11 GB/s}, {8 MiB: 100 us, 4.4 GB/s}: 33 MB take 100 us + 7.5 ms.
  // Uncalibrated, a send inside a domain gets the channels NCCL gives its size in this plan's communicator
  // (nccl_p2p_channels): 32 MiB among 8 GPUs of a DGX H100 runs on 4 x 15.4 GB/s, and is capped there likewise.
  struct PairCost {
    double latency_s = 0;
    double bandwidth_Bps = 0;
    std::vector<topologies::SizeBand> bands;  // measured; empty: the model's figures
    P2pCommunicator communicator;             // the plan's, inside a domain (channel_Bps 0: no channel limit)
    topologies::SizeBand at(double bytes) const {
      if (!bands.empty()) return topologies::band_of(bands, bytes);
      return topologies::SizeBand{0, latency_s, p2p_send_Bps(communicator, bytes, bandwidth_Bps)};
    }
    double time_s(double bytes) const {
      if (!(bytes > 0)) return 0.0;
      const topologies::SizeBand band = at(bytes);
      return band.latency_s + bytes / band.bandwidth_Bps;
    }
    double size_factor(double bytes) const { return std::min(1.0, bandwidth_Bps / at(bytes).bandwidth_Bps); }
    double rate_cap_Bps(double bytes) const {  // 0: none
      const double band_Bps = at(bytes).bandwidth_Bps;
      return band_Bps < bandwidth_Bps ? band_Bps : 0.0;
    }
  };
  const PairCost& p2p(int from_rank, int to_rank) const;
  // The latency of each of one rank's sends posted together (a transfers phase: one NCCL group), in the order
  // given: its pair's latency at its size, and for a send across domains NCCL's proxy post overhead for each
  // network send posted before it (kNetworkPostOverheadSimple_s: one proxy thread posts them one at a time), as
  // the all-to-all model charges. Example: pass-q's all-to-all on CP 4 with one GPU per node: three network
  // sends of 22.4 us leave after 22.4, 25.4 and 28.4 us.
  std::vector<double> group_send_latencies_s(int from_rank, const std::vector<int>& peers,
                                             const std::vector<double>& bytes) const;
  // One send of such a group: `network_posted` counts the sender's network sends posted so far (and is advanced).
  double group_send_latency_s(int from_rank, int to_rank, double bytes, int& network_posted) const;
  bool crosses_domains(int from_rank, int to_rank) const;
  // The links a send from one rank to another leaves its GPU by and enters the other by (its ports), as keys:
  // sends sharing a key share that link. Inside a full mesh each pair has a link of its own.
  std::pair<long long, long long> ports(int from_rank, int to_rank) const;
  // Across domains, the sender's NIC's link into the network and the receiver's NIC's link out of it, as keys
  // (GPUs that share a NIC share them); (-1, -1) inside a domain.
  std::pair<long long, long long> nic_ports(int from_rank, int to_rank) const;
  const ComputeRates& rates(int rank) const { return rates_[static_cast<size_t>(rank)]; }
  // The slowest figures over the ranks (lowest bandwidth, peak and memory, highest launch overhead): what
  // steps every rank runs in lock-step (small kernels, reading the weights) wait for.
  const ComputeRates& slowest_rates() const { return slowest_; }
  const topologies::Topology& topology() const { return *topology_; }

 private:
  const topologies::Topology* topology_;
  std::vector<int> gpus_;
  std::vector<int> domain_of_rank_;
  CommGroup group_;
  std::vector<ComputeRates> rates_;
  ComputeRates slowest_;
  // Pairs of GPUs cost the same when their node groups and their sharing a domain are the same: one cost
  // per such class, worked out once here so that evaluation only reads.
  std::map<std::tuple<int, int, bool>, PairCost> pair_costs_;
  std::vector<const PairCost*>
      pair_cost_of_;  // [(from group x groups + to group) x 2 + across]: the map's, for lookups
  int node_groups_ = 0;
  std::vector<int> node_group_of_rank_;
  struct RankPorts {  // first / last link of a route to (from) a GPU of the same domain, and of another
    long long out_intra = -1, in_intra = -1, out_cross = -1, in_cross = -1;
    long long nic_out = -1, nic_in = -1;  // its NIC's link into the network and back (GPUs may share the NIC)
    bool mesh = false;                    // intra-domain routes are direct links, one per peer
  };
  std::vector<RankPorts> ports_;
  void add_ports();
  void add_pair_costs();
};

// Model FLOPs utilisation assumed for prefill (40-60 % is what large-scale training and prefill report).
constexpr double kPrefillEfficiency = 0.5;

// Generating `tokens` tokens from the token times at both ends of the generation (the first token's and the
// last's, whoever computed them: the model or the simulator), by the trapezoid rule; a first call's cost, which
// each token_s carries, is paid once. Example: 100 tokens at 1.0 ms first and 1.2 ms last with a 0.1 ms first
// call: 100 x 1.1 ms - 99 x 0.1 ms = 100.1 ms.
double generation_from_ends_s(long long tokens, double first_token_s, double last_token_s, double first_call_s);

// Empty when the workload fits in a GPU's memory, else what it needs: "needs 143.9 GB per GPU (KV cache 2.621 GB,
// weights 141.2 GB), a GPU has 80 GB".
std::string memory_shortfall(const DecodeResult& result, const DecodeModel& model);
// Throws std::invalid_argument when the workload does not fit in a GPU's memory: "ring at 128000 tokens on 16 GPUs
// does not fit: " and memory_shortfall's words.
void check_fits(const DecodeResult& result, const DecodeModel& model);

// A token's time from one layer's result (the model's or a replay's): layers x (latency - first call) + first call
// + reading the weights, and under an eager framework (DecodePlan::eager_dispatch_s) at least layers x (the
// layer's kernels x the dispatch + its host round trips) + first call. Both engines time tokens with it.
double token_time_s(const DecodePlan& plan, const DecodeResult& layer);

}  // namespace treering::model
