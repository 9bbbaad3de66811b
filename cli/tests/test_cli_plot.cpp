// `treering plot FILE.csv|json --x COL --y COL [--series COL] -o fig.png|svg`: a file's rows drawn where their
// values must put them (derived by hand from the numbers written below), a sweep's own files drawn, and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"
#include "svg_reader.hpp"

using treering::cli::testing::run_treering;
namespace svg = treering::cli::test_svg;

namespace {

constexpr std::uint32_t kFirst = 0x1f77b4, kSecond = 0xd62728;  // the first two colours of the cycle

std::string dir() {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/plot/";
  std::filesystem::create_directories(path);
  return path;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = dir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A series' line: of the stroked paths in its colour (the legend's sample is one too), the one with most points.
svg::Path line_of(const std::vector<svg::Path>& paths, std::uint32_t rgb) {
  const svg::Path* best = nullptr;
  for (const svg::Path& path : paths) {
    if (path.stroke_rgb == static_cast<int>(rgb) && (!best || path.points.size() > best->points.size())) best = &path;
  }
  REQUIRE(best != nullptr);
  return *best;
}

// A PNG's width and height: big-endian at bytes 16 and 20 (the IHDR chunk after the 8-byte signature).
std::pair<unsigned, unsigned> png_size(const std::string& bytes) {
  REQUIRE(bytes.size() > 24);
  REQUIRE(bytes.compare(1, 3, "PNG") == 0);
  auto at = [&](std::size_t i) {
    unsigned value = 0;
    for (std::size_t k = 0; k < 4; ++k) value = value << 8 | static_cast<unsigned char>(bytes[i + k]);
    return value;
  };
  return {at(16), at(20)};
}

}  // namespace

TEST_CASE("plot: each series' line passes where its rows' values put it, sorted by x") {
  // Series a: (1, 10), (4, 40), (2, 20), given out of order; series b: (1, 40), (4, 10). Linear axes:
  // x = 2 lies a third of the way from x = 1 to x = 4; y = 20 a third of the way from 10 to 40, and b's
  // ends are a's ends swapped in height. A row with an empty y is left out.
  const std::string csv = write("points.csv", "x,y,s\n1,10,a\n4,40,a\n2,20,a\n1,40,b\n4,10,b\n3,,b\n");
  const std::string out = dir() + "points.svg";
  const auto result = run_treering("plot " + csv + " --x x --y y --series s -o " + out);
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  const std::vector<svg::Path> paths = svg::paths(read_file(out));
  const svg::Path a = line_of(paths, kFirst), b = line_of(paths, kSecond);
  REQUIRE(a.points.size() == 3);
  REQUIRE(b.points.size() == 2);
  CHECK(a.points[0].x < a.points[1].x);  // sorted: 1, 2, 4
  CHECK(a.points[1].x < a.points[2].x);
  CHECK(3 * (a.points[1].x - a.points[0].x) == doctest::Approx(a.points[2].x - a.points[0].x).scale(1e-9));
  CHECK(3 * (a.points[1].y - a.points[0].y) == doctest::Approx(a.points[2].y - a.points[0].y).scale(1e-9));
  CHECK(a.points[2].y < a.points[0].y);  // 40 above 10: the image's y grows downwards
  CHECK(b.points[0].y == doctest::Approx(a.points[2].y).scale(1e-9));
  CHECK(b.points[1].y == doctest::Approx(a.points[0].y).scale(1e-9));
  CHECK(b.points[1].x == doctest::Approx(a.points[2].x).scale(1e-9));
}

TEST_CASE("plot draws what sweep --tp 8 --cp 2 --scope step writes, as CSV or JSON, as PNG or SVG") {
  const std::string sweep =
      "sweep --cluster dgx-h100 --nodes 2,4 --tp 8 --cp 2 --scope step --workload llama3.1-8b "
      "--seq-len 128k,256k,512k --algo tree,ring -o ";
  REQUIRE(run_treering(sweep + dir() + "sweep.csv").exit_code == 0);
  REQUIRE(run_treering(sweep + dir() + "sweep.json").exit_code == 0);
  const auto png = run_treering("plot " + dir() + "sweep.csv --x seq_len --y step_s --series algo --log-x --log-y -o " +
                                dir() + "step.png");
  REQUIRE_MESSAGE(png.exit_code == 0, png.err);
  CHECK(png_size(read_file(dir() + "step.png")) ==
        std::pair<unsigned, unsigned>{960, 600});  // LineChart's default size
  // JSON nests compute_s under breakdown: both names reach it; one line per algorithm.
  for (const char* y : {"compute_s", "breakdown.compute_s"}) {
    const auto result = run_treering("plot " + dir() + "sweep.json --x seq_len --y " + y + " --series algo -o " +
                                     dir() + "compute.svg");
    REQUIRE_MESSAGE(result.exit_code == 0, result.err);
    const std::string document = read_file(dir() + "compute.svg");
    CHECK(svg::well_formed_xml(document));
    CHECK(line_of(svg::paths(document), kFirst).points.size() >= 2);
    CHECK(line_of(svg::paths(document), kSecond).points.size() >= 2);
  }
}

TEST_CASE("plot: bad input is one line 'FILE: error: ...' and exit 2") {
  const std::string rows = write("rows.csv", "algo,seq_len,latency_s\ntree,80000,1e-4\nring,80000,2e-3\n");
  const std::string out = " -o " + dir() + "bad.png";
  struct Case {
    std::string arguments, message;
  };
  const std::vector<Case> cases{
      {rows + " --x seq_len --y step_s" + out,
       rows + ": error: no column 'step_s' (columns: algo, seq_len, latency_s)"},
      {rows + " --x algo --y latency_s" + out,
       rows + ": error: column 'algo' is not numeric (numeric columns: seq_len, latency_s)"},
      {rows + " --x seq_len --y latency_s --series engine" + out, rows + ": error: no column 'engine'"},
      {write("empty.csv", "") + " --x a --y b" + out, "empty.csv: error: the file is empty"},
      {write("empty.json", "\n") + " --x a --y b" + out, "empty.json: error: the file is empty"},
      {write("header.csv", "a,b\n") + " --x a --y b" + out, "header.csv: error: no rows under the header"},
      {write("report.json", "{\"ranked\": []}") + " --x a --y b" + out, "report.json: error: not a list of rows"},
      {write("rows.txt", "a,b\n1,2\n") + " --x a --y b" + out, "rows.txt: error: not a .csv or .json file"},
      {write("ragged.csv", "a,b\n1,2\n3\n") + " --x a --y b" + out,
       "ragged.csv:3:1: error: 1 fields, the header has 2"},
      {write("zeros.csv", "a,b\n0,1\n1,0\n") + " --x a --y b --log-x --log-y" + out,
       "zeros.csv: error: no row has a point to draw"},
      {dir() + "missing.csv --x a --y b" + out, "missing.csv: error:"},
      {rows + " --x seq_len --y latency_s -o " + dir() + "fig.jpg",
       "error: -o " + dir() + "fig.jpg: name a .png or .svg file"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.arguments);
    const auto result = run_treering("plot " + c.arguments);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(c.message) != std::string::npos);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  }
  CHECK_FALSE(std::filesystem::exists(dir() + "bad.png"));
  CHECK_FALSE(std::filesystem::exists(dir() + "fig.jpg"));
}

TEST_CASE("plot reads quoted CSV fields and CRLF line ends") {
  // Two series whose names hold a comma and a quote; 2 points each.
  const std::string csv = write(
      "quoted.csv", "x,y,name\r\n1,2,\"a,b\"\r\n2,3,\"a,b\"\r\n1,1,\"say \"\"hi\"\"\"\r\n2,5,\"say \"\"hi\"\"\"\r\n");
  const auto result = run_treering("plot " + csv + " --x x --y y --series name -o " + dir() + "quoted.svg");
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  const std::vector<svg::Path> paths = svg::paths(read_file(dir() + "quoted.svg"));
  CHECK(line_of(paths, kFirst).points.size() == 2);
  CHECK(line_of(paths, kSecond).points.size() == 2);
}
