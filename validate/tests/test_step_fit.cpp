// The real step's calibration (step_fit.hpp): the weighted line per part, the reader, and the model's calibrated
// parts, each against figures worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "treering/topologies/input_error.hpp"
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

TEST_CASE("the attention is fitted per kernel shape, and a step of that shape costs its shape's line") {
  // Made-up steps: llama3.2-1b (head dim 64, group 4) attention 10 us + bytes / 2.68 TB/s a layer, llama3.1-8b
  // (128, group 4) 20 us + bytes / 2.68 TB/s, the other parts as the model has them. One line through both cannot
  // hold both fixed costs; the shapes' lines come back exact: 10 and 20 us, efficiency 2.68 / 3.35 = 0.80.
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  std::vector<validate::StepPoint> points;
  for (const char* name : {"llama3.2-1b", "llama3.1-8b"}) {
    for (long long seq_len : {4096LL, 32768LL, 131072LL}) {
      validate::StepPoint p{name, 1, seq_len, 1, 0, {}, ""};
      const validate::StepPrediction model = validate::predict_step(spec, p);
      p.part_s = model.part_s;
      const double fixed_s = std::string(name) == "llama3.2-1b" ? 10e-6 : 20e-6;
      p.part_s[0] = model.layers * (fixed_s + model.part_bytes[0] / model.layers / 2.68e12);
      p.step_s = p.part_s[0] + p.part_s[1] + p.part_s[2] + p.part_s[3] + p.part_s[4];
      points.push_back(p);
    }
  }
  const validate::StepFit fit = validate::fit_step(spec, points);
  REQUIRE(fit.attention_shapes.size() == 2u);
  CHECK(fit.attention_shapes[0].head_dim == 64);
  CHECK(fit.attention_shapes[0].line.fixed_s == doctest::Approx(10e-6).scale(1e-12));
  CHECK(fit.attention_shapes[1].head_dim == 128);
  CHECK(fit.attention_shapes[1].line.fixed_s == doctest::Approx(20e-6).scale(1e-12));
  CHECK(fit.attention_shapes[1].line.efficiency == doctest::Approx(0.80).scale(1e-12));
  for (double e : fit.part_errors_after[0]) CHECK(std::fabs(e) < 1e-9);  // each step's attention as made
}

TEST_CASE("a step file without its parts is refused with the file's name, not read as zeros") {
  const std::string file = std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/bad-step.json";
  CHECK(validate::is_step_file(file));
  try {
    validate::read_step_points(file);
    FAIL("expected an InputError");
  } catch (const topologies::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("bad-step.json") != std::string::npos);
    CHECK(what.find("not a treering-realrun step file") != std::string::npos);
  }
}

TEST_CASE("a step file's sniffer never throws, and a batch beyond an int is refused, not converted") {
  // {"kind": 7}: nlohmann's value("kind", "") throws type_error on a number; the sniffer says "not a step file".
  // "batch": 1e10 as get<int>() would be a float converted out of range (undefined behaviour).
  const std::string path = (std::filesystem::temp_directory_path() / "treering-step-batch-1e10.json").string();
  {
    std::ofstream out(path);
    out << R"({"kind": 7})";
  }
  CHECK_FALSE(validate::is_step_file(path));
  {
    std::ofstream out(path);
    out << R"({"kind": "treering-step", "results": [{"workload": "llama3.1-8b", "batch": 1e10, "seq_len": 4096,)"
        << R"( "step_s": 0.01, "parts_s": {}}]})";
  }
  CHECK(validate::is_step_file(path));
  try {
    validate::read_step_points(path);
    FAIL("expected an InputError");
  } catch (const topologies::InputError& e) {
    CHECK(std::string(e.what()).find("'batch' must be a whole number >= 1") != std::string::npos);
  }
  std::filesystem::remove(path);
}
