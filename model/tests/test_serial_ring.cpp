// An implementation whose ring does not hide a step's send behind its attention (ImplProfile ring.overlap false,
// as Meta's pass-Q decode: topologies/impls/meta-cp-decode.yaml): each rank attends, then sends, one after the other.
#include <doctest/doctest.h>

#include <memory>

#include "treering/model/layout_model.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

TEST_CASE("meta-cp-decode: pass-q's query send follows the attention, so a round costs attention + send") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::LayoutModel layouts(topology, model::place_layout(topology, model::Layout{8, 2}));
  model::Workload workload = model::find_workload("paper-mha16");
  workload.batch = 2;  // as Meta pads it at cp 2: each rank owns one sequence's query
  model::PlanOptions serial;
  serial.impl = std::make_shared<const topologies::ImplProfile>(topologies::load_impl_profile("meta-cp-decode"));
  const double serial_s = layouts.attention(DecodeAlgorithm::pass_q, workload, 128000, serial).slowest.latency_s;
  const double overlapped_s = layouts.attention(DecodeAlgorithm::pass_q, workload, 128000).slowest.latency_s;
  // A GPU holds 2 of the 16 heads: each round attends one query against its 64,000 tokens of one sequence,
  // 64,000 x 2 heads x 2 x 128 x 2 B = 65,536,000 B + q 512 + o 512 + lse 8: A = 3 us + 65,537,032 B / 2.68 TB/s
  // (24.45 us + 3). The q hop and the state home cross the network: 30.4 us (8.4 + 14 + 3 + 5.0) + bytes / 46 GB/s.
  const double attention_s = 3e-6 + 65537032.0 / 2.68e12;
  const double q_hop_s = 30.4e-6 + 512 / 46e9, home_s = 30.4e-6 + 520 / 46e9;
  const double merge_s = 3e-6 + 2 * 520 / 2.68e12;  // the owner reads its two states
  // Serial: attend own (A), send q (S), attend the received one (A), all-to-all home, merge.
  CHECK(serial_s == doctest::Approx(2 * attention_s + q_hop_s + home_s + merge_s).scale(1e-12).epsilon(1e-12));
  // Overlapped: the send leaves with the attention; the second round starts when q arrives (S > A here).
  CHECK(overlapped_s == doctest::Approx(q_hop_s + attention_s + home_s + merge_s).scale(1e-12).epsilon(1e-12));
}
