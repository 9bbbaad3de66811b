// Prediction bands (uncertainty.hpp), derived by hand from a small synthetic calibration and from a profile.
#include <doctest/doctest.h>

#include <cmath>

#include "treering/model/uncertainty.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE("a calibrated prediction's band comes from the calibration's largest residual") {
  // A calibration whose largest |error| was 20 % and which fitted the HBM efficiency: both parts carry e = 0.2, so
  // a latency L lies in [L / 1.2, L / 0.8]; extrapolated, e = 0.4: [L / 1.4, L / 0.6].
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::Calibration calibration;
  calibration.provenance.inputs = {"synthetic.json"};
  calibration.provenance.max_abs_rel_error = 0.2;
  calibration.hbm_efficiency = 0.8;
  spec.calibration = calibration;
  const topologies::Topology topology(spec);
  const model::DecodeModel decode(topology, {0, 1});
  const model::DecodeResult r =
      decode.predict(model::DecodeAlgorithm::tree, model::find_workload("paper-mha16"), 64000);
  const topologies::ImplProfile& profile = topologies::default_impl_profile();
  const model::Band inside = model::latency_band(r, model::prediction_errors(topology, profile, false));
  CHECK(inside.low_s == doctest::Approx(r.latency_s / 1.2).scale(1e-12).epsilon(1e-12));
  CHECK(inside.high_s == doctest::Approx(r.latency_s / 0.8).scale(1e-12).epsilon(1e-12));
  const model::Band outside = model::latency_band(r, model::prediction_errors(topology, profile, true));
  CHECK(outside.low_s == doctest::Approx(r.latency_s / 1.4).scale(1e-12).epsilon(1e-12));
  CHECK(outside.high_s == doctest::Approx(r.latency_s / 0.6).scale(1e-12).epsilon(1e-12));
}

TEST_CASE("an uncalibrated band adds its parts' bands, each with the profile's error") {
  // The worked example of uncertainty.hpp: 100 us of compute (e = 0.125), 50 us of communication (e = 0.36).
  const model::Band band = model::band_of(100e-6, 50e-6, {0.125, 0.36, 0.36, ""});
  CHECK(band.low_s == doctest::Approx(100e-6 / 1.125 + 50e-6 / 1.36).scale(1e-12));
  CHECK(band.low_s == doctest::Approx(125.65e-6).scale(1e-12).epsilon(1e-4));
  CHECK(band.high_s == doctest::Approx(192.41e-6).scale(1e-12).epsilon(1e-4));
  // An error of 1 or more leaves no upper bound.
  CHECK(std::isinf(model::band_of(1.0, 0.0, {1.0, 0.0, 0.0, ""}).high_s));
  // The efficient profile's figures, uncalibrated: compute 0.125, communication 0.23.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::RelativeErrors e = model::prediction_errors(topology, topologies::default_impl_profile(), false);
  CHECK(e.compute == 0.125);
  CHECK(e.communication == 0.23);
  CHECK(e.network_latency == 0.46);  // validate/tests/test_multinode_band.cpp
}

TEST_CASE("communication across nodes at latency-bound sizes carries its own, wider error") {
  // The worked example of uncertainty.hpp: 100 us of compute (0.125), 50 us of communication (0.23) of which
  // 30 us cross nodes latency-bound (0.54): [88.89 + 16.26 + 19.48, 114.29 + 25.97 + 65.22] = [124.6, 205.5] us.
  const model::Band band = model::band_of(100e-6, 50e-6, 30e-6, {0.125, 0.23, 0.54, ""});
  CHECK(band.low_s == doctest::Approx(100e-6 / 1.125 + 20e-6 / 1.23 + 30e-6 / 1.54).scale(1e-12));
  CHECK(band.high_s == doctest::Approx(100e-6 / 0.875 + 20e-6 / 0.77 + 30e-6 / 0.46).scale(1e-12));
  CHECK(band.high_s == doctest::Approx(205.5e-6).scale(1e-12).epsilon(1e-3));
}

TEST_CASE("a decode whose combine crosses nodes by small messages is latency-bound there") {
  // tree on 2 DGX H100 at 64k tokens: the combine's all-reduces of a few KiB cross the network (tree/LL: a
  // 25 us latency, well over their transfer): all of the inter-node time is latency-bound. The ring's K/V
  // blocks, hundreds of MB, are not.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  std::vector<int> gpus(16);
  for (int g = 0; g < 16; ++g) gpus[static_cast<size_t>(g)] = g;
  const model::DecodeModel decode(topology, gpus);
  const model::Workload w = model::find_workload("paper-mha16");
  const model::DecodeResult tree = decode.evaluate(decode.plan(model::DecodeAlgorithm::tree, w, 65536));
  REQUIRE(tree.breakdown.inter_node_s > 0);
  CHECK(tree.breakdown.inter_node_latency_bound_s == doctest::Approx(tree.breakdown.inter_node_s).scale(1e-12));
  model::PlanOptions no_overlap;
  no_overlap.ring_overlap = false;
  const model::DecodeResult ring = decode.evaluate(decode.plan(model::DecodeAlgorithm::ring, w, 65536, no_overlap));
  REQUIRE(ring.breakdown.inter_node_s > 0);
  CHECK(ring.breakdown.inter_node_latency_bound_s == 0);
}

TEST_CASE("two predictions are within each other's band when their bands share a point") {
  // e = 0.125 on compute only: 100 us -> [88.9, 114.3]; 110 us -> [97.8, 125.7]; 130 us -> [115.6, 148.6].
  const model::RelativeErrors e{0.125, 0.0, 0.0, ""};
  const model::Band a = model::band_of(100e-6, 0, e), b = model::band_of(110e-6, 0, e),
                    c = model::band_of(130e-6, 0, e);
  CHECK(model::bands_overlap(a, b));
  CHECK(model::bands_overlap(b, a));
  CHECK_FALSE(model::bands_overlap(a, c));
  CHECK(model::bands_overlap(b, c));
}

TEST_CASE("attention fitted by kernel shape gives the compute band its own worst error") {
  // Collectives fitted to 20 %, the attention by shape to 5 %: compute e = 0.05, communication 0.2. Attention alone
  // (no collective fit): compute 0.05, communication the profile's 0.23.
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::Calibration calibration;
  calibration.provenance.inputs = {"synthetic.json"};
  calibration.provenance.max_abs_rel_error = 0.2;
  calibration.provenance.attention_max_abs_rel_error = 0.05;
  calibration.hbm_efficiency = 0.8;
  spec.calibration = calibration;
  const model::RelativeErrors both =
      model::prediction_errors(topologies::Topology(spec), topologies::default_impl_profile(), false);
  CHECK(both.compute == doctest::Approx(0.05).scale(1.0));
  CHECK(both.communication == doctest::Approx(0.2).scale(1.0));
  const model::RelativeErrors doubled =
      model::prediction_errors(topologies::Topology(spec), topologies::default_impl_profile(), true);
  CHECK(doubled.compute == doctest::Approx(0.1).scale(1.0));
  spec.calibration->provenance.max_abs_rel_error.reset();
  const model::RelativeErrors alone =
      model::prediction_errors(topologies::Topology(spec), topologies::default_impl_profile(), false);
  CHECK(alone.compute == doctest::Approx(0.05).scale(1.0));
  CHECK(alone.communication == 0.23);
}

TEST_CASE("a calibrated band at the sizes a prediction uses comes from the residuals around them") {
  // The worked example of uncertainty.hpp: residuals {4 KiB: 0.9 %, 8 KiB: 5.3 %, 16 KiB: 6.9 %}.
  topologies::CalibrationProvenance p;
  p.max_abs_rel_error = 0.2;
  CHECK(model::calibration_residual(p, 4096, 8192) == 0.2);  // no residuals listed: the largest |error|
  p.residuals = {{4096, 0.009}, {8192, 0.053}, {16384, 0.069}};
  CHECK(model::calibration_residual(p, 4096, 8192) == 0.053);  // the two sizes it spans
  CHECK(model::calibration_residual(p, 4096, 4096) == 0.009);  // a measured size: its own
  CHECK(model::calibration_residual(p, 5000, 9000) == 0.069);  // 4 KiB (below 5,000) to 16 KiB (above 9,000)
  CHECK(model::calibration_residual(p, 6000, 7000) == 0.053);  // between 4 and 8 KiB: the larger of the two
  // Inside the calibration, communication carries the residual there; outside it, twice the largest |error|.
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::Calibration calibration;
  calibration.provenance = p;
  spec.calibration = calibration;
  const topologies::Topology topology(spec);
  const topologies::ImplProfile& profile = topologies::default_impl_profile();
  const model::RelativeErrors inside =
      model::prediction_errors(topology, profile, {true, false, std::pair{4096.0, 4096.0}});
  CHECK(inside.communication == 0.009);
  CHECK(inside.network_latency == 0.009);
  CHECK(inside.compute == 0.125);  // the attention not calibrated: the profile's, not doubled
  const model::RelativeErrors outside =
      model::prediction_errors(topology, profile, {false, true, std::pair{4096.0, 4096.0}});
  CHECK(outside.communication == 0.4);
}
