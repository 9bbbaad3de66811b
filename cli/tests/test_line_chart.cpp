// Line charts as PNG: the file's structure read back with zlib, pixels where the axes must put them (derived by
// hand from linear and logarithmic scales), the bitmap font's cells, and the errors.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "line_chart.hpp"

using treering::cli::ChartSeries;
using treering::cli::LineChart;

namespace {

constexpr std::uint32_t kWhite = 0xffffff, kRed = 0xd62728, kGreen = 0x2ca02c, kBlue = 0x1f77b4;

std::uint32_t be32(const std::string& bytes, size_t at) {
  std::uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return value;
}

// A PNG read back: its chunks in order, IHDR's fields, and the scanlines inflated from the IDAT data.
struct DecodedPng {
  std::vector<std::string> chunk_types;
  std::string ihdr, scanlines;
  bool crcs_match = true;
  std::uint32_t width = 0, height = 0;
  std::uint32_t pixel(std::uint32_t x, std::uint32_t y) const {
    const size_t at = y * (1 + 3 * size_t{width}) + 1 + 3 * size_t{x};
    return (std::uint32_t{static_cast<unsigned char>(scanlines.at(at))} << 16) |
           (std::uint32_t{static_cast<unsigned char>(scanlines.at(at + 1))} << 8) |
           static_cast<unsigned char>(scanlines.at(at + 2));
  }
};

DecodedPng decode(const std::string& png) {
  REQUIRE(png.size() > 8);
  REQUIRE(png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  DecodedPng decoded;
  std::string idat;
  for (size_t at = 8; at < png.size();) {
    const std::uint32_t length = be32(png, at);
    const std::string type_and_data = png.substr(at + 4, 4 + length);
    const auto crc = crc32(0L, reinterpret_cast<const Bytef*>(type_and_data.data()),
                           static_cast<uInt>(type_and_data.size()));
    if (crc != be32(png, at + 8 + length)) decoded.crcs_match = false;
    decoded.chunk_types.push_back(type_and_data.substr(0, 4));
    if (decoded.chunk_types.back() == "IHDR") decoded.ihdr = type_and_data.substr(4);
    if (decoded.chunk_types.back() == "IDAT") idat += type_and_data.substr(4);
    at += 12 + length;
  }
  REQUIRE(decoded.ihdr.size() == 13);
  decoded.width = be32(decoded.ihdr, 0);
  decoded.height = be32(decoded.ihdr, 4);
  // One more byte of room than expected, so that too much data shows as a wrong size rather than an error.
  uLongf size = decoded.height * (1 + 3 * uLongf{decoded.width}) + 1;
  decoded.scanlines.assign(size, '\0');
  REQUIRE(uncompress(reinterpret_cast<Bytef*>(decoded.scanlines.data()), &size,
                     reinterpret_cast<const Bytef*>(idat.data()), idat.size()) == Z_OK);
  decoded.scanlines.resize(size);
  return decoded;
}

// A series without a name, so that no legend is drawn and the only pixels of its colour are its own.
ChartSeries unnamed(std::vector<double> x, std::vector<double> y, std::uint32_t rgb, bool dashed = false) {
  ChartSeries series;
  series.x = std::move(x);
  series.y = std::move(y);
  series.rgb = rgb;
  series.dashed = dashed;
  series.markers = false;
  return series;
}

// Runs of consecutive pixels of a colour along a row (or a column); their lengths, in order.
std::vector<int> runs(const DecodedPng& png, std::uint32_t rgb, std::uint32_t index, bool along_row) {
  std::vector<int> lengths;
  bool inside = false;
  const std::uint32_t count = along_row ? png.width : png.height;
  for (std::uint32_t i = 0; i < count; ++i) {
    const bool match = (along_row ? png.pixel(i, index) : png.pixel(index, i)) == rgb;
    if (match && !inside) lengths.push_back(0);
    if (match) ++lengths.back();
    inside = match;
  }
  return lengths;
}

// The row (or column) holding the most pixels of a colour: where a horizontal (vertical) line of it runs.
std::uint32_t busiest(const DecodedPng& png, std::uint32_t rgb, bool row) {
  std::uint32_t best = 0;
  int best_count = -1;
  for (std::uint32_t index = 0; index < (row ? png.height : png.width); ++index) {
    int count = 0;
    for (int length : runs(png, rgb, index, row)) count += length;
    if (count > best_count) best = index, best_count = count;
  }
  return best;
}

LineChart linear_chart(std::vector<ChartSeries> series) {
  LineChart chart;
  chart.log_x = chart.log_y = false;
  chart.series = std::move(series);
  return chart;
}

}  // namespace

TEST_CASE("render_png writes an 8-bit RGB PNG of the chart's size with valid chunks") {
  LineChart chart;
  chart.title = "latency";
  chart.width_px = 320;  // 0x140
  chart.height_px = 200;  // 0xC8
  chart.series.push_back({"ring", {1e5, 1e6}, {1e-3, 1e-2}});
  const std::string png = treering::cli::render_png(chart);
  REQUIRE(png.size() > 33);
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(be32(png, 8) == 13);  // IHDR's length, right after the signature
  CHECK(png.substr(12, 4) == "IHDR");
  CHECK(png.substr(16, 4) == std::string("\x00\x00\x01\x40", 4));
  CHECK(png.substr(20, 4) == std::string("\x00\x00\x00\xC8", 4));
  CHECK(png[24] == 8);  // bit depth
  CHECK(png[25] == 2);  // colour type: RGB
  const DecodedPng decoded = decode(png);
  CHECK(decoded.chunk_types == std::vector<std::string>{"IHDR", "IDAT", "IEND"});
  CHECK(decoded.crcs_match);
  REQUIRE(decoded.scanlines.size() == 200u * (1 + 3 * 320));
  for (size_t row = 0; row < 200; ++row) CHECK(decoded.scanlines[row * (1 + 3 * 320)] == 0);
}

TEST_CASE("the background is white and the series is drawn in its colour") {
  LineChart chart;
  chart.series.push_back({"one", {1, 10, 100}, {5, 50, 20}, 0x123456});
  const DecodedPng png = decode(treering::cli::render_png(chart));
  REQUIRE(png.width == 960);
  REQUIRE(png.height == 600);
  CHECK(png.pixel(0, 0) == kWhite);
  CHECK(png.pixel(959, 0) == kWhite);
  CHECK(png.pixel(0, 599) == kWhite);
  CHECK(png.pixel(959, 599) == kWhite);
  size_t coloured = 0;
  for (std::uint32_t y = 0; y < png.height; ++y) {
    for (std::uint32_t x = 0; x < png.width; ++x) coloured += png.pixel(x, y) == 0x123456;
  }
  CHECK(coloured > 100);  // two segments spanning the plot, 2 px wide, and markers
}

TEST_CASE("a linear axis puts equal steps of data at equal steps of pixels") {
  // Horizontal lines at y = 1, 2, 3: 2 lies midway between 1 and 3, and higher values are drawn higher.
  const DecodedPng png = decode(treering::cli::render_png(linear_chart(
      {unnamed({0, 10}, {1, 1}, kRed), unnamed({0, 10}, {2, 2}, kGreen), unnamed({0, 10}, {3, 3}, kBlue)})));
  const auto red = static_cast<int>(busiest(png, kRed, true));
  const auto green = static_cast<int>(busiest(png, kGreen, true));
  const auto blue = static_cast<int>(busiest(png, kBlue, true));
  CHECK(red > green);
  CHECK(green > blue);
  CHECK(std::abs(2 * green - (red + blue)) <= 2);  // within a pixel of the midpoint
  // A solid line is one unbroken run across the plot, which takes most of the image's width.
  const auto solid = runs(png, kGreen, static_cast<std::uint32_t>(green), true);
  REQUIRE(solid.size() == 1);
  CHECK(solid[0] > 480);
}

TEST_CASE("a log axis puts each decade at the same distance") {
  SUBCASE("y: 1, 10 and 100") {
    LineChart chart;
    chart.series = {unnamed({1, 2}, {1, 1}, kRed), unnamed({1, 2}, {10, 10}, kGreen),
                    unnamed({1, 2}, {100, 100}, kBlue)};
    const DecodedPng png = decode(treering::cli::render_png(chart));
    const auto red = static_cast<int>(busiest(png, kRed, true));
    const auto green = static_cast<int>(busiest(png, kGreen, true));
    const auto blue = static_cast<int>(busiest(png, kBlue, true));
    CHECK(red > blue);
    CHECK(std::abs(2 * green - (red + blue)) <= 2);
  }
  SUBCASE("x: 1k, 10k and 100k, with a point at 0 left out") {
    LineChart chart;
    chart.series = {unnamed({1e3, 1e3}, {1, 2}, kRed), unnamed({1e4, 1e4, 0}, {1, 2, 3}, kGreen),
                    unnamed({1e5, 1e5}, {1, 2}, kBlue)};
    const DecodedPng png = decode(treering::cli::render_png(chart));
    const auto red = static_cast<int>(busiest(png, kRed, false));
    const auto green = static_cast<int>(busiest(png, kGreen, false));
    const auto blue = static_cast<int>(busiest(png, kBlue, false));
    CHECK(red < blue);
    CHECK(std::abs(2 * green - (red + blue)) <= 2);
  }
}

TEST_CASE("a dashed line is broken into many short dashes") {
  const DecodedPng png = decode(treering::cli::render_png(
      linear_chart({unnamed({0, 10}, {1, 1}, kRed), unnamed({0, 10}, {2, 2}, kBlue, true)})));
  const auto dashes = runs(png, kBlue, busiest(png, kBlue, true), true);
  // The line crosses more than half of the 960-px image; dashes a few pixels long leave many gaps on the way.
  CHECK(dashes.size() >= 10);
  for (int length : dashes) CHECK(length < 40);
  CHECK(runs(png, kRed, busiest(png, kRed, true), true).size() == 1);
}

TEST_CASE("custom tick formatters are used, and given powers of ten on a log axis") {
  LineChart chart;
  chart.series.push_back({"s", {1, 1000}, {1, 1000}});
  std::set<double> formatted_x;
  int y_calls = 0;
  chart.format_x = [&](double value) {
    formatted_x.insert(value);
    return "x";
  };
  chart.format_y = [&](double) {
    ++y_calls;
    return "y";
  };
  treering::cli::render_png(chart);
  for (double power : {1.0, 10.0, 100.0, 1000.0}) CHECK(formatted_x.count(power) == 1);
  CHECK(y_calls > 0);
}

TEST_CASE("format_si and format_general") {
  using treering::cli::format_general;
  using treering::cli::format_si;
  CHECK(format_si(80e3) == "80k");
  CHECK(format_si(1.3e6) == "1.3M");
  CHECK(format_si(5.12e6) == "5.12M");
  CHECK(format_si(1e9) == "1G");
  CHECK(format_si(999999) == "1M");
  CHECK(format_si(-2000) == "-2k");
  CHECK(format_si(999) == "999");
  CHECK(format_si(0.5) == "0.5");
  CHECK(format_general(0.002) == "0.002");
  CHECK(format_general(1e-5) == "1e-05");
  CHECK(format_general(150) == "150");
}

TEST_CASE("bitmap font: every printable character is its own glyph inside its cell, others a hollow box") {
  using namespace treering::cli::detail;
  CHECK(text_width_px("abc", 1) == 17);  // 3 glyphs of 5 px and 2 gaps of 1 px
  CHECK(text_width_px("abc", 2) == 34);
  CHECK(text_width_px("\xC2\xB5s", 1) == 11);  // "µs": two characters, though three bytes
  CHECK(text_width_px("", 1) == 0);
  std::set<std::string> glyphs;  // each as '#' and '.' by rows
  for (int c = 33; c <= 126; ++c) {
    Canvas canvas(kGlyphWidthPx + 2, kGlyphHeightPx + 2);
    draw_text(canvas, 1, 1, std::string(1, static_cast<char>(c)), 0, 1);
    bool inked = false, outside = false;
    std::string bitmap;
    for (int y = 0; y < canvas.height_px; ++y) {
      for (int x = 0; x < canvas.width_px; ++x) {
        const bool ink = canvas.get(x, y) != kWhite;
        bitmap += ink ? '#' : '.';
        inked |= ink;
        outside |= ink && (x == 0 || y == 0 || x == canvas.width_px - 1 || y == canvas.height_px - 1);
      }
    }
    CHECK_MESSAGE(inked, static_cast<char>(c));
    CHECK_MESSAGE(!outside, static_cast<char>(c));
    glyphs.insert(bitmap);
  }
  CHECK(glyphs.size() == 94);
  // Character 127 is outside the font: a rectangle of ink with a white inside.
  Canvas canvas(kGlyphWidthPx, kGlyphHeightPx);
  draw_text(canvas, 0, 0, "\x7f", 0, 1);
  int left = canvas.width_px, right = -1, top = canvas.height_px, bottom = -1;
  for (int y = 0; y < canvas.height_px; ++y) {
    for (int x = 0; x < canvas.width_px; ++x) {
      if (canvas.get(x, y) == kWhite) continue;
      left = std::min(left, x), right = std::max(right, x), top = std::min(top, y), bottom = std::max(bottom, y);
    }
  }
  REQUIRE(right - left >= 2);
  REQUIRE(bottom - top >= 2);
  for (int y = top; y <= bottom; ++y) {
    for (int x = left; x <= right; ++x) {
      const bool edge = x == left || x == right || y == top || y == bottom;
      CHECK((canvas.get(x, y) != kWhite) == edge);
    }
  }
}

TEST_CASE("charts that cannot be drawn are refused") {
  using treering::cli::render_png;
  LineChart chart;
  CHECK_THROWS_AS(render_png(chart), std::invalid_argument);  // no series
  chart.series.push_back({"empty", {}, {}});
  CHECK_THROWS_AS(render_png(chart), std::invalid_argument);  // no points
  chart.series[0] = {"zeros on log axes", {0, -1}, {1, 2}};
  CHECK_THROWS_AS(render_png(chart), std::invalid_argument);
  chart.series[0] = {"not finite", {1, 2}, {std::nan(""), HUGE_VAL}};
  CHECK_THROWS_AS(render_png(chart), std::invalid_argument);
  chart.series[0] = {"mismatched", {1, 2, 3}, {1, 2}};
  CHECK_THROWS_AS(render_png(chart), std::invalid_argument);
  chart.series[0] = {"fine", {1, 2}, {1, 2}};
  CHECK_NOTHROW(render_png(chart));
  chart.width_px = 199;
  CHECK_THROWS_AS(render_png(chart), std::invalid_argument);
  chart.width_px = 200;
  chart.height_px = 149;
  CHECK_THROWS_AS(render_png(chart), std::invalid_argument);
  chart.height_px = 150;
  CHECK_NOTHROW(render_png(chart));
}

TEST_CASE("write_png writes render_png's bytes, and names the path it cannot write") {
  LineChart chart;
  chart.series.push_back({"s", {1, 2}, {3, 4}});
  const auto path = std::filesystem::temp_directory_path() / "treering_test_line_chart.png";
  treering::cli::write_png(chart, path.string());
  std::ifstream in(path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(written == treering::cli::render_png(chart));
  std::filesystem::remove(path);
  const std::string bad_path = "/nonexistent-directory-for-treering/chart.png";
  try {
    treering::cli::write_png(chart, bad_path);
    FAIL("expected std::runtime_error");
  } catch (const std::runtime_error& error) {
    CHECK(std::string(error.what()).find(bad_path) != std::string::npos);
  }
}
