// The calibration section as treering calibrate writes it (calibration_yaml.hpp), and read back by the loader.
#include <doctest/doctest.h>

#include <string>

#include "treering/topologies/calibration_yaml.hpp"
#include "treering/topologies/load.hpp"

using namespace treering::topologies;

namespace {

// A calibration with one of each kind of line: provenance, a tier, a collective, a send/recv band pair.
Calibration small_calibration() {
  Calibration c;
  c.provenance.inputs = {"runs/a.log"};
  c.provenance.date = "2026-11-28";
  c.provenance.tool = "treering calibrate";
  c.provenance.r_squared = 0.99;
  c.provenance.sizes_bytes = std::pair{8.0, 1048576.0};
  c.scale_out = TierCalibration{2.5e-6, 45e9};
  c.collectives["ring"].base_latency_s = 6.8e-6;
  c.p2p_scale_out = {SizeBand{0, 1e-5, 2e10}, SizeBand{65536, 1.2e-5, 2.2e10}};
  return c;
}

}  // namespace

TEST_CASE("calibration yaml: the schema's units, comments at column 33") {
  // 2.5e-6 s = 2.5 us; 45e9 B/s = 45 GB/s; 6.8e-6 s = 6.8 us; 1e-5 s = 10 us, 2e10 B/s = 20 GB/s; 1.2e-5 s = 12 us,
  // 2.2e10 B/s = 22 GB/s; 1048576 B whole.
  const std::string expected =
      "calibration:                     # written by `treering calibrate`\n"
      "  provenance:\n"
      "    inputs: [\"runs/a.log\"]\n"
      "    date: \"2026-11-28\"\n"
      "    tool: \"treering calibrate\"\n"
      "    r_squared: 0.99\n"
      "    sizes: {min: 8B, max: 1048576B}\n"
      "  tiers:\n"
      "    scale-out: {latency: 2.5us, bandwidth: 45GB/s}\n"
      "  collectives:\n"
      "    ring: {base_latency: 6.8us}\n"
      "  p2p:                           # measured send/recv by message size: latency + bytes / bandwidth\n"
      "    scale-out:\n"
      "      - {latency: 10us, bandwidth: 20GB/s}\n"
      "      - {from: 65536B, latency: 12us, bandwidth: 22GB/s}\n";
  CHECK(calibration_yaml(small_calibration()) == expected);
}

TEST_CASE("calibration yaml: written into a cluster file, it loads back to the same figures") {
  const std::string base = "# a cluster\n" + cluster_presets().front().yaml_text;
  const std::string text = with_calibration(with_calibration(base, Calibration{}), small_calibration());
  CHECK(text.find("calibration:") == text.rfind("calibration:"));  // the first section replaced, not kept
  const ClusterSpec spec = load_cluster_text(text, "calibrated.yaml");
  REQUIRE(spec.calibration.has_value());
  const Calibration& c = *spec.calibration;
  CHECK(c.provenance.inputs == std::vector<std::string>{"runs/a.log"});
  CHECK(c.provenance.date == "2026-11-28");
  CHECK(c.scale_out->latency_s.value() == doctest::Approx(2.5e-6).scale(1e-12));
  CHECK(c.scale_out->bandwidth_Bps == doctest::Approx(45e9).scale(1e9));
  CHECK(c.collectives.at("ring").base_latency_s.value() == doctest::Approx(6.8e-6).scale(1e-12));
  REQUIRE(c.p2p_scale_out.size() == 2);
  CHECK(c.p2p_scale_out[1].from_bytes == 65536);
  CHECK(c.p2p_scale_out[1].bandwidth_Bps == doctest::Approx(2.2e10).scale(1e9));
}
