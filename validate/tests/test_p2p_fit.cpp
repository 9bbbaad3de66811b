// Point-to-point calibration (p2p_fit.hpp): the tier each measurement belongs to, its bands, and the section
// written into a cluster file and read back.
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/topologies/load.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/validate/p2p_fit.hpp"

using namespace treering;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

validate::CollectiveMeasurement sendrecv(double bytes, int ranks, double time_s) {
  validate::CollectiveMeasurement m;
  m.op = model::CollectiveOp::sendrecv;
  m.bytes = bytes;
  m.ranks = ranks;
  m.time_s = time_s;
  m.file = "synthetic.json";
  return m;
}

// A host whose copies run at 11 GB/s while they fit its caches and 4.4 GB/s beyond: 20 us + n / 11 GB/s up to
// 4 MiB, 100 us + n / 4.4 GB/s from 16 MiB.
std::vector<validate::CollectiveMeasurement> knee_on(int ranks) {
  std::vector<validate::CollectiveMeasurement> out;
  for (double n : {256.0 * 1024, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB}) {
    out.push_back(sendrecv(n, ranks, n <= 4 * MiB ? 20e-6 + n / 11e9 : 100e-6 + n / 4.4e9));
  }
  return out;
}

}  // namespace

TEST_CASE("two ranks of one node: scale-up bands with the knee at 8 MiB") {
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(spec, {1, std::nullopt});
  const validate::P2pFit fit = validate::calibrate_p2p(spec, knee_on(2));
  CHECK(fit.scale_out.empty());
  REQUIRE(fit.scale_up.size() == 2);
  CHECK(fit.scale_up[0].bandwidth_Bps == doctest::Approx(11e9).scale(1e-12).epsilon(1e-6));
  CHECK(fit.scale_up[1].from_bytes == doctest::Approx(8 * MiB).scale(1e-12));  // sqrt(4 MiB x 16 MiB)
  CHECK(fit.scale_up[1].latency_s == doctest::Approx(100e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.scale_up[1].bandwidth_Bps == doctest::Approx(4.4e9).scale(1e-12).epsilon(1e-6));
  CHECK(fit.sizes_bytes.first == 256.0 * 1024);
  CHECK(fit.sizes_bytes.second == 64 * MiB);
}

TEST_CASE("sixteen ranks over two DGX nodes: the ring crosses the network, scale-out bands") {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {2, std::nullopt});
  const validate::P2pFit fit = validate::calibrate_p2p(spec, knee_on(16));
  CHECK(fit.scale_up.empty());
  CHECK(fit.scale_out.size() == 2);
}

TEST_CASE("the p2p section is written in the cluster file and reads back the same") {
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(spec, {1, std::nullopt});
  topologies::Calibration calibration;
  calibration.provenance.inputs = {"synthetic.json"};
  calibration.provenance.tool = "test";
  calibration.provenance.tokens = std::pair<long long, long long>{1000, 4000};
  validate::apply_p2p(validate::calibrate_p2p(spec, knee_on(2)), calibration);
  const std::string text = validate::with_calibration(topologies::cluster_source("rtx4090-pcie").text, calibration);
  const topologies::ClusterSpec loaded = topologies::load_cluster_text(text, "calibrated.yaml");
  REQUIRE(loaded.calibration);
  REQUIRE(loaded.calibration->p2p_scale_up.size() == 2);
  CHECK(loaded.calibration->p2p_scale_up[0].from_bytes == 0);
  CHECK(loaded.calibration->p2p_scale_up[1].from_bytes ==
        doctest::Approx(8 * MiB).scale(1e-12).epsilon(1e-6));  // whole bytes
  CHECK(loaded.calibration->p2p_scale_up[1].bandwidth_Bps ==
        doctest::Approx(4.4e9).scale(1e-12).epsilon(1e-5));  // 6 digits
  CHECK(loaded.calibration->provenance.p2p_sizes_bytes->second == 64 * MiB);
  CHECK(loaded.calibration->provenance.tokens->second == 4000);
}

TEST_CASE("a collective is not a point-to-point measurement") {
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  std::vector<validate::CollectiveMeasurement> measured = knee_on(2);
  measured.front().op = model::CollectiveOp::allreduce;
  CHECK_THROWS_AS(validate::calibrate_p2p(spec, measured), std::invalid_argument);
}
