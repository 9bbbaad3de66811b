// Line charts in two steps: the layout (line_chart.cpp) works out what is drawn, in data units, from the data (the
// axes' ranges, ticks and tick labels, the series' points, the legend, the titles), and the renderer
// (line_chart_cairo.cpp) draws that layout with cairo onto a PNG image or an SVG document by the same code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace treering::cli {

// Turns a tick's value into its label.
using TickFormatter = std::function<std::string(double)>;

struct ChartSeries {
  std::string name;              // legend text; a series without a name has no legend entry
  std::vector<double> x, y;      // same size; points with non-positive values on a log axis are left out
  std::uint32_t rgb = 0x1f77b4;  // line colour, 0xRRGGBB
  bool dashed = false;           // e.g. the simulator's figures dashed beside the model's solid
  bool markers = true;           // a small filled circle at each point
};

// What the caller asks for.
struct LineChart {
  std::string title, x_label, y_label;
  bool log_x = true, log_y = true;
  std::vector<ChartSeries> series;
  int width_px = 960, height_px = 600;  // the PNG's size; the SVG has the same size in CSS px
  // Tick labels; empty means the defaults: topologies::format_si for x ("80k"), format_general for y.
  TickFormatter format_x, format_y;
};

struct ChartPoint {
  double x, y;
};

struct AxisTick {
  double value;
  std::string label;
};

// One axis of the layout, in data units.
struct ChartAxis {
  std::string title;
  bool logarithmic = false;
  double min = 0, max = 1;          // the range shown: the data's extent and 5 % of it either side
  std::vector<AxisTick> ticks;      // labelled, ascending, inside [min, max]
  std::vector<double> minor_ticks;  // unlabelled, ascending: 2..9 x 10^n (or the skipped powers) on a log axis
};

struct SeriesLayout {
  std::string name;
  std::vector<ChartPoint> points;  // the drawable points, in the caller's order
  std::uint32_t rgb = 0;
  bool dashed = false, markers = true;
};

// What is drawn: a pure description, no pixel positions. The renderer places it on the image.
struct ChartLayout {
  std::string title;
  int width_px = 0, height_px = 0;
  ChartAxis x_axis, y_axis;
  std::vector<SeriesLayout> series;  // in the caller's order, every series (one with no drawable point too)
  std::vector<std::size_t> legend;   // indices into series of those with names, in order; empty: no legend
};

// Checks the chart and lays it out: points with a non-finite coordinate, or a non-positive one on a log axis, are
// left out; each axis gets the densest of the usual tick sets (1-2-5 steps, every power of ten, every 2nd ...)
// with at most one tick per 120 px of width (x) or 60 px of height (y). Throws std::invalid_argument when no
// point is left to draw, when a series' x and y differ in size, or when the size is under 200x150 px or over
// 16384 px a side.
ChartLayout lay_out_chart(const LineChart& chart);

// printf's "%g": "0.002", "150", "1e-05".
std::string format_general(double value);

// Seconds as a figure writes them: topologies::format_duration with the micro sign, "20 µs", "1.5 ms".
std::string format_duration_label(double seconds);

// The layout drawn with cairo (line_chart_cairo.cpp): anti-aliased text in the system's sans-serif font, the plot
// framed, a grid at the ticks, the legend to the right of the plot. A tick label that would overlap its
// neighbour is left out (its tick stays). Throws std::invalid_argument when the layout leaves no room for the plot
// or the legend at its size, std::runtime_error when cairo fails.
std::string render_png(const ChartLayout& layout);  // the PNG file's bytes, 8-bit RGB, width_px x height_px
std::string render_svg(const ChartLayout& layout);  // the SVG document, width_px x height_px

// Render and write the file; throw std::runtime_error naming the path when it cannot be written.
void write_png(const ChartLayout& layout, const std::string& path);
void write_svg(const ChartLayout& layout, const std::string& path);

namespace detail {
// Throws std::invalid_argument unless 200x150 <= width x height <= 16384x16384 px (the layout's and the
// renderers' one check).
void check_chart_size(int width_px, int height_px);
}  // namespace detail

}  // namespace treering::cli
