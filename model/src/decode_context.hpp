// Shared by the phase evaluators of DecodeModel::evaluate. Private to the model module.
#pragma once

#include <string>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/model/link_sharing.hpp"

namespace treering::model::detail {

struct Context {
  const DecodeModel& model;
  const DecodePlan& plan;
  DecodeResult& result;
  std::vector<double> sent;         // bytes sent per rank
  std::vector<ComputeRates> rates;  // per rank, with the plan's kernel launch cost (plan_rates)
  ComputeRates slowest;
  // Set by a phase whose ranks end at different times (pass-q's ring): how long before the phase's end each
  // rank was done (<= 0). A transfers phase that follows starts each rank's sends then; any other clears it.
  std::vector<double> ready_offset_s;
  const GroupSharing* sharing = nullptr;  // links shared with other groups of a layout (none: alone)
  size_t phase = 0;                       // the phase being evaluated
  int ranks() const { return static_cast<int>(plan.gpus.size()); }
  // The share of the most shared link rank's ring edge crosses in this phase (0: none shared).
  double edge_share_Bps(int rank) const;
  // Everything the shared links of this phase carry / their rate (0: none shared), and whether that link is scale-out.
  double shared_bound_s() const;
  bool shared_bound_scale_out() const;
};

// `latency_bound`: its latency is at least its transfer (counted in inter_node_latency_bound_s across domains).
void add_communication(Context& c, const std::string& label, double time_s, bool inter_node, const std::string& how,
                       bool latency_bound = false);
void add_compute(Context& c, const std::string& label, double time_s);
void add_host(Context& c, const std::string& label, double time_s);
void count_send(Context& c, int from, int to, double bytes);

void evaluate_ring(Context& c, const Phase& phase);
void evaluate_q_ring(Context& c, const Phase& phase);  // decode_q_ring.cpp
// The time of one ring step's transfer of `bytes` on `edge`: one latency per separately synchronised exchange
// (DecodePlan::ring_exchanges_per_step) and the bytes at the band's rate.
// Where the edge of `rank` shares a link with other groups, at least its bytes (as the simulator sizes them) at
// its share of that link.
double ring_transfer_s(const Context& c, int rank, const DecodeModel::PairCost& edge, double bytes);
void finish_ring(Context& c, const Phase& phase, double compute_s, double overlapped_s, double exposed_network_s,
                 double exposed_fabric_s);

}  // namespace treering::model::detail
