// The real step's calibration (step_fit.hpp): the weighted line per part, the reader, and the model's calibrated
// parts, each against figures worked out by hand.
#include <doctest/doctest.h>

#include "treering/topologies/load.hpp"
#include "treering/validate/step_fit.hpp"

using namespace treering;

TEST_CASE("a part's line: fixed time and efficiency come back from exact points") {
  // y = 10 us + x / 2.68 TB/s: 10 MB -> 13.7313 us, 100 MB -> 47.3134 us. Over a rated 3.35 TB/s: 0.80.
  const std::vector<double> x{10e6, 100e6}, y{10e-6 + 10e6 / 2.68e12, 10e-6 + 100e6 / 2.68e12};
  const validate::PartLine line = validate::fit_part_line(x, y, 1.0 / 2.5e12, 1.0 / 3.35e12);
  CHECK(line.slope_fitted);
  CHECK(line.fixed_s == doctest::Approx(10e-6).scale(1e-12));
  CHECK(1.0 / (line.slope_s_per_byte * 3.35e12) == doctest::Approx(0.80).scale(1e-12));
}

TEST_CASE("a part whose bytes hardly vary keeps the prior's slope and fits its fixed time") {
  // Every point at 1 MB: y_i = 5 us + 1 MB x prior (1 / 2 TB/s = 0.5 us): 5.5 us; a fitted slope would be a guess.
  const std::vector<double> x{1e6, 1e6, 1.1e6}, y{5.5e-6, 5.5e-6, 5.55e-6};
  const validate::PartLine line = validate::fit_part_line(x, y, 1.0 / 2e12, 1.0 / 3.35e12);
  CHECK_FALSE(line.slope_fitted);
  CHECK(line.slope_s_per_byte == doctest::Approx(0.5e-12).scale(1e-20));
  CHECK(line.fixed_s == doctest::Approx(5e-6).scale(1e-12));
}

TEST_CASE("an efficiency above the rated bandwidth is held at 1 and the fixed time refitted") {
  // y = x / 5 TB/s, faster than a rated 3.35 TB/s: the slope is held at 1 / 3.35 TB/s, and fixed = argmin of the
  // relative errors of a + x / 3.35 TB/s against y: both points' times are below the slope alone, so a = 0.
  const std::vector<double> x{10e6, 100e6}, y{10e6 / 5e12, 100e6 / 5e12};
  const validate::PartLine line = validate::fit_part_line(x, y, 1.0 / 2e12, 1.0 / 3.35e12);
  CHECK(line.slope_s_per_byte == doctest::Approx(1.0 / 3.35e12).scale(1e-20));
  CHECK(line.fixed_s == 0);
}

TEST_CASE("step files: measured points read, skipped ones left out, the kind recognised") {
  const std::string file = std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/realrun-step.json";
  CHECK(validate::is_step_file(file));
  CHECK_FALSE(validate::is_step_file(std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/realrun-decode.json"));
  const std::vector<validate::StepPoint> points = validate::read_step_points(file);
  REQUIRE(points.size() == 2u);
  CHECK(points[0].part_s[2] == 0.0045);  // mlp
  CHECK(points[1].tp == 2);
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  CHECK_THROWS_AS(validate::fit_step(spec, points), std::invalid_argument);  // a loopback point
}

TEST_CASE("a calibrated part costs fixed + bytes / (rated x efficiency) per layer, the others the rates'") {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const validate::StepPoint point{"llama3.1-8b", 1, 4096, 1, 0.0075, {}, ""};
  const validate::StepPrediction before = validate::predict_step(spec, point);
  topologies::Calibration calibration;
  calibration.step[2] = {13.3e-6, 0.87};  // mlp
  spec.calibration = calibration;
  const validate::StepPrediction after = validate::predict_step(spec, point);
  // llama3.1-8b's MLP: 3 x 4,096 x 14,336 x 2 B = 352,321,536 B a layer; / (3.35 TB/s x 0.87) = 120.885 us;
  // + 13.3 us = 134.185 us; x 32 layers = 4.29393 ms.
  CHECK(after.part_bytes[2] == 32 * 352321536.0);
  CHECK(after.part_s[2] == doctest::Approx(32 * (13.3e-6 + 352321536.0 / (3.35e12 * 0.87))).scale(1e-12));
  CHECK(after.part_s[1] == doctest::Approx(before.part_s[1]).scale(1e-12));  // projections: not calibrated
}
