// The chart drawn as files: the PNG's signature and size read back by cairo; the SVG as a document: well-formed
// XML, every label drawn (cairo writes each text as a group of glyph references), one path per series through its
// points, placed where the axes must put them (derived by hand from linear and logarithmic scales).
#include <cairo.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "line_chart.hpp"
#include "svg_reader.hpp"
#include "treering/topologies/input_error.hpp"

using treering::cli::ChartLayout;
using treering::cli::ChartSeries;
using treering::cli::lay_out_chart;
using treering::cli::LineChart;
using treering::cli::render_png;
using treering::cli::render_svg;
namespace svg = treering::cli::test_svg;

namespace {

constexpr std::uint32_t kRed = 0xd62728, kGreen = 0x2ca02c, kBlue = 0x1f77b4;

// A series without a name (no legend entry) and without markers: its line is the only path in its colour.
ChartSeries unnamed(std::vector<double> x, std::vector<double> y, std::uint32_t rgb, bool dashed = false) {
  return {"", std::move(x), std::move(y), rgb, dashed, false};
}

LineChart linear_chart(std::vector<ChartSeries> series) {
  LineChart chart;
  chart.log_x = chart.log_y = false;
  chart.series = std::move(series);
  return chart;
}

// The one stroked path in the colour; fails the test unless there is exactly one.
svg::Path line_of(const std::vector<svg::Path>& paths, std::uint32_t rgb) {
  std::vector<svg::Path> found;
  std::copy_if(paths.begin(), paths.end(), std::back_inserter(found),
               [&](const svg::Path& path) { return path.stroke_rgb == static_cast<int>(rgb); });
  REQUIRE(found.size() == 1);
  return found[0];
}

std::size_t code_points(const std::string& utf8) {
  return static_cast<std::size_t>(
      std::count_if(utf8.begin(), utf8.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

TEST_CASE("render_png: a PNG of the chart's size that cairo reads back") {
  LineChart chart;
  chart.title = "latency";
  chart.width_px = 320;
  chart.height_px = 200;
  chart.series.push_back({"ring", {1e5, 1e6}, {1e-3, 1e-2}});
  const std::string png = render_png(lay_out_chart(chart));
  REQUIRE(png.size() > 24);
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(png.substr(12, 4) == "IHDR");
  CHECK(png.substr(16, 8) == std::string("\x00\x00\x01\x40\x00\x00\x00\xC8", 8));  // 320 = 0x140, 200 = 0xC8
  std::istringstream in(png);
  auto read = [](void* closure, unsigned char* data, unsigned int length) {
    auto* stream = static_cast<std::istringstream*>(closure);
    stream->read(reinterpret_cast<char*>(data), length);
    return stream->gcount() == static_cast<std::streamsize>(length) ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_READ_ERROR;
  };
  cairo_surface_t* image = cairo_image_surface_create_from_png_stream(read, &in);
  CHECK(cairo_surface_status(image) == CAIRO_STATUS_SUCCESS);
  CHECK(cairo_image_surface_get_width(image) == 320);
  CHECK(cairo_image_surface_get_height(image) == 200);
  cairo_surface_destroy(image);
}

TEST_CASE("render_svg: well-formed XML of the chart's size, every label drawn in order") {
  LineChart chart;
  chart.title = "Decode latency (4 GPUs)";
  chart.x_label = "context length (tokens)";
  chart.y_label = "latency per layer";
  chart.series.push_back({"ring", {1e3, 1e4, 1e5}, {1e-3, 2e-3, 4e-3}, kRed});
  chart.series.push_back({"tree (simulated)", {1e3, 1e5}, {2e-3, 3e-3}, kBlue, true, false});
  chart.format_y = [](double seconds) { return treering::cli::format_general(seconds * 1e3) + " ms"; };
  const ChartLayout layout = lay_out_chart(chart);
  const std::string document = render_svg(layout);
  CHECK(svg::well_formed_xml(document));
  CHECK(document.find("<svg") != std::string::npos);
  CHECK(document.find("width=\"960px\" height=\"600px\"") != std::string::npos);
  // Drawn in this order: x tick labels, y tick labels, the title, the x title, the y title, the legend's names.
  std::vector<std::string> expected;
  for (const auto& tick : layout.x_axis.ticks) expected.push_back(tick.label);
  for (const auto& tick : layout.y_axis.ticks) expected.push_back(tick.label);
  expected.insert(expected.end(), {chart.title, chart.x_label, chart.y_label, "ring", "tree (simulated)"});
  REQUIRE(layout.x_axis.ticks.size() == 7);  // 1k 2k 5k 10k 20k 50k 100k (test_line_chart.cpp)
  const std::vector<svg::TextRun> runs = svg::text_runs(document);
  REQUIRE(runs.size() == expected.size());
  // Each run has a glyph per character, and within a font the same character is always the same glyph and
  // different characters different glyphs: the run spells its label, up to which glyph stands for which letter.
  std::map<std::string, std::map<std::string, std::string>> glyph_of;      // font -> character -> glyph
  std::map<std::string, std::map<std::string, std::string>> character_of;  // font -> glyph -> character
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string& text = expected[i];
    REQUIRE_MESSAGE(runs[i].glyphs.size() == code_points(text), text);
    std::size_t at = 0;
    for (const svg::Glyph& glyph : runs[i].glyphs) {
      std::size_t length = 1;
      while (at + length < text.size() && (static_cast<unsigned char>(text[at + length]) & 0xC0) == 0x80) ++length;
      const std::string character = text.substr(at, length);
      at += length;
      auto [g, new_character] = glyph_of[glyph.font].emplace(character, glyph.id);
      auto [c, new_glyph] = character_of[glyph.font].emplace(glyph.id, character);
      CHECK_MESSAGE(g->second == glyph.id, text);
      CHECK_MESSAGE(c->second == character, text);
      CHECK(glyph.x >= 0);
      CHECK(glyph.x < 960);
    }
  }
}

TEST_CASE("each series is one path through its points; dashed ones carry a dash pattern") {
  // Horizontal lines at y = 1 and 3 from x = 0 to 10, and a tent from (0, 2) up to (5, 3) and down to (10, 2):
  // 2 lies midway between 1 and 3, higher values higher up, x = 5 midway. (cairo merges a straight line's
  // vertices, hence the tent.)
  const LineChart chart = linear_chart(
      {unnamed({0, 10}, {1, 1}, kRed), unnamed({0, 5, 10}, {2, 3, 2}, kGreen, true), unnamed({0, 10}, {3, 3}, kBlue)});
  const std::vector<svg::Path> paths = svg::paths(render_svg(lay_out_chart(chart)));
  const svg::Path red = line_of(paths, kRed), green = line_of(paths, kGreen), blue = line_of(paths, kBlue);
  REQUIRE(red.points.size() == 2);
  REQUIRE(green.points.size() == 3);
  REQUIRE(blue.points.size() == 2);
  CHECK(red.points[0].y > green.points[0].y);  // the image's y grows downwards
  CHECK(green.points[0].y > blue.points[0].y);
  CHECK(2 * green.points[0].y == doctest::Approx(red.points[0].y + blue.points[0].y).scale(1e-12));
  CHECK(green.points[1].y == doctest::Approx(blue.points[0].y).scale(1e-12));
  // x = 5 midway between 0 and 10; every series starts and ends at the same columns.
  CHECK(2 * green.points[1].x == doctest::Approx(green.points[0].x + green.points[2].x).scale(1e-12));
  CHECK(red.points[0].x == doctest::Approx(green.points[0].x).scale(1e-12));
  CHECK(blue.points[1].x == doctest::Approx(green.points[2].x).scale(1e-12));
  CHECK(green.dashed);
  CHECK_FALSE(red.dashed);
  CHECK_FALSE(blue.dashed);
}

TEST_CASE("a log axis puts each decade at the same distance") {
  // Vertical lines at x = 1k and 100k, and green through (10k, 1), (100k, 10), (10k, 100): 10k lies midway
  // between 1k and 100k, and 10 between 1 and 100.
  LineChart chart;
  chart.series = {unnamed({1e3, 1e3}, {1, 2}, kRed), unnamed({1e4, 1e5, 1e4}, {1, 10, 100}, kGreen),
                  unnamed({1e5, 1e5}, {1, 2}, kBlue)};
  const std::vector<svg::Path> paths = svg::paths(render_svg(lay_out_chart(chart)));
  const svg::Path red = line_of(paths, kRed), green = line_of(paths, kGreen), blue = line_of(paths, kBlue);
  REQUIRE(green.points.size() == 3);
  CHECK(red.points[0].x < blue.points[0].x);
  CHECK(2 * green.points[0].x == doctest::Approx(red.points[0].x + blue.points[0].x).scale(1e-12));
  CHECK(green.points[1].x == doctest::Approx(blue.points[0].x).scale(1e-12));
  CHECK(2 * green.points[1].y == doctest::Approx(green.points[0].y + green.points[2].y).scale(1e-12));
}

TEST_CASE("markers: one filled path of circles per series, one circle per point") {
  LineChart chart = linear_chart({{"", {1, 2, 3, 4}, {1, 3, 2, 4}, kGreen, false, true}});
  const std::vector<svg::Path> paths = svg::paths(render_svg(lay_out_chart(chart)));
  const auto filled = std::count_if(paths.begin(), paths.end(),
                                    [](const svg::Path& path) { return path.fill_rgb == static_cast<int>(kGreen); });
  REQUIRE(filled == 1);
  const auto markers = std::find_if(paths.begin(), paths.end(),
                                    [](const svg::Path& path) { return path.fill_rgb == static_cast<int>(kGreen); });
  CHECK(markers->subpaths == 4);
  CHECK(line_of(paths, kGreen).points.size() == 4);
}

TEST_CASE("tick labels that would overlap are left out; a long legend name is cut to fit the image") {
  LineChart chart =
      linear_chart({{"a series whose name goes on and on and on, far longer than any legend should be "
                     "allowed to grow on a chart of this size",
                     {0, 100},
                     {0, 1},
                     kRed}});
  chart.format_x = [](double value) { return "a much longer tick label at " + treering::cli::format_general(value); };
  const ChartLayout layout = lay_out_chart(chart);
  const std::vector<svg::TextRun> runs = svg::text_runs(render_svg(layout));
  // The x labels come first; those drawn are the runs with the x labels' baseline.
  std::vector<svg::TextRun> x_labels;
  std::copy_if(runs.begin(), runs.end(), std::back_inserter(x_labels),
               [&](const svg::TextRun& run) { return run.glyphs.front().y == runs.front().glyphs.front().y; });
  CHECK(x_labels.size() >= 2);
  CHECK(x_labels.size() < layout.x_axis.ticks.size());
  for (std::size_t i = 1; i < x_labels.size(); ++i) {
    CHECK(x_labels[i].glyphs.front().x > x_labels[i - 1].glyphs.back().x + 8);  // a gap, past the last glyph's width
  }
  const svg::TextRun& legend = runs.back();
  CHECK(legend.glyphs.size() < code_points(chart.series[0].name));
  CHECK(legend.glyphs.back().x < 960 - 12);  // inside the image's margin
}

TEST_CASE("layouts that cannot be drawn are refused") {
  LineChart chart;
  for (int i = 0; i < 40; ++i) chart.series.push_back({"series " + std::to_string(i), {1, 2}, {1, 2}});
  // 40 rows of the legend at about 21 px each are 830 px: more than the 600 px image.
  CHECK_THROWS_AS(render_svg(lay_out_chart(chart)), std::invalid_argument);
  chart.series.resize(1);
  ChartLayout layout = lay_out_chart(chart);
  CHECK_NOTHROW(render_png(layout));
  ChartLayout bad = layout;
  bad.y_axis.min = 0;  // log axis from 0
  CHECK_THROWS_AS(render_png(bad), std::invalid_argument);
  bad = layout;
  bad.x_axis.max = bad.x_axis.min;
  CHECK_THROWS_AS(render_svg(bad), std::invalid_argument);
  bad = layout;
  bad.legend.push_back(5);  // no series 5
  CHECK_THROWS_AS(render_svg(bad), std::logic_error);
  bad = layout;
  bad.width_px = 100;
  CHECK_THROWS_AS(render_png(bad), std::invalid_argument);
}

TEST_CASE("write_png and write_svg write the rendering, and name the path they cannot write") {
  LineChart chart;
  chart.series.push_back({"s", {1, 2}, {3, 4}});
  const ChartLayout layout = lay_out_chart(chart);
  const auto directory = std::filesystem::temp_directory_path();
  const auto png_path = directory / "treering_test_line_chart.png";
  const auto svg_path = directory / "treering_test_line_chart.svg";
  treering::cli::write_png(layout, png_path.string());
  treering::cli::write_svg(layout, svg_path.string());
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  CHECK(read(png_path) == render_png(layout));
  const std::string written_svg = read(svg_path);
  CHECK(svg::well_formed_xml(written_svg));
  CHECK(svg::text_runs(written_svg).size() == svg::text_runs(render_svg(layout)).size());
  std::filesystem::remove(png_path);
  std::filesystem::remove(svg_path);
  const std::string bad_png = "/nonexistent-directory-for-treering/chart.png";
  const std::string bad_svg = "/nonexistent-directory-for-treering/chart.svg";
  CHECK_THROWS_WITH_AS(treering::cli::write_png(layout, bad_png), doctest::Contains(bad_png.c_str()),
                       treering::topologies::InputError);
  CHECK_THROWS_WITH_AS(treering::cli::write_svg(layout, bad_svg), doctest::Contains(bad_svg.c_str()),
                       treering::topologies::InputError);
}
