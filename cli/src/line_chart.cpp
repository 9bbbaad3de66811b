// Line charts: checks the chart, lays it out, chooses ticks and draws it on a canvas (png_encode.cpp encodes it).
#include "line_chart.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <utility>

namespace treering::cli {
namespace {

using detail::Canvas;
using detail::draw_text;
using detail::kCapHeightPx;
using detail::kGlyphHeightPx;
using detail::text_width_px;

constexpr std::uint32_t kInkRgb = 0x222222;          // text, frame and tick marks
constexpr std::uint32_t kGridRgb = 0xdddddd;         // grid lines, drawn under the data
constexpr std::uint32_t kLegendFrameRgb = 0x999999;
constexpr int kMinWidthPx = 200, kMinHeightPx = 150, kMaxSidePx = 16384;
// Lengths at text scale 1; they grow with the text on large images.
constexpr int kMarginPx = 10, kTickPx = 5, kLineWidthPx = 2, kMarkerPx = 5, kDashOnPx = 8, kDashOffPx = 5;
constexpr int kSwatchPx = 34;           // the legend's sample of a line: long enough to show two dash gaps
constexpr double kPadFraction = 0.04;   // room between the outermost points and the frame, of the axis' span

struct Point { double x, y; };
using SeriesPoints = std::vector<std::vector<Point>>;

struct Range { double lo, hi; };

// Maps data values onto pixels: range.lo onto px_lo and range.hi onto px_hi (px_hi < px_lo upwards).
struct Axis {
  Range range{0, 1};
  bool logarithmic = false;
  double px_lo = 0, px_hi = 1;
  double to_px(double value) const {
    auto along = [this](double v) { return logarithmic ? std::log10(v) : v; };
    return px_lo + (along(value) - along(range.lo)) / (along(range.hi) - along(range.lo)) * (px_hi - px_lo);
  }
};

// Each series' points that the axes can show, after checking the chart; throws std::invalid_argument.
SeriesPoints drawable_points(const LineChart& chart) {
  if (chart.width_px < kMinWidthPx || chart.height_px < kMinHeightPx || chart.width_px > kMaxSidePx ||
      chart.height_px > kMaxSidePx) {
    throw std::invalid_argument("line chart: " + std::to_string(chart.width_px) + "x" +
                                std::to_string(chart.height_px) + " px is outside 200x150 to 16384x16384 px");
  }
  auto shown = [](double value, bool log) { return std::isfinite(value) && (!log || value > 0); };
  SeriesPoints points;
  size_t total = 0;
  for (const ChartSeries& series : chart.series) {
    if (series.x.size() != series.y.size()) {
      throw std::invalid_argument("line chart: series '" + series.name + "' has " + std::to_string(series.x.size()) +
                                  " x values but " + std::to_string(series.y.size()) + " y values");
    }
    points.emplace_back();
    for (size_t i = 0; i < series.x.size(); ++i) {
      if (shown(series.x[i], chart.log_x) && shown(series.y[i], chart.log_y)) {
        points.back().push_back({series.x[i], series.y[i]});
      }
    }
    total += points.back().size();
  }
  if (total == 0) throw std::invalid_argument("line chart: no point to draw (log axes leave out values <= 0)");
  return points;
}

// The axis limits: the data's extent and a margin, in decades on a log axis; a single value gets room around it.
Range axis_range(const SeriesPoints& points, bool along_x, bool log) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& series : points) {
    for (const Point& point : series) {
      const double value = log ? std::log10(along_x ? point.x : point.y) : (along_x ? point.x : point.y);
      lo = std::min(lo, value);
      hi = std::max(hi, value);
    }
  }
  if (hi - lo <= 1e-9 * std::max(1.0, std::abs(hi))) {
    const double half = log ? 0.3 : (lo == 0 ? 1.0 : std::abs(lo) * 0.1);  // a factor of 2 either way on a log axis
    lo -= half;
    hi += half;
  }
  const double pad = (hi - lo) * kPadFraction;
  return log ? Range{std::pow(10.0, lo - pad), std::pow(10.0, hi + pad)} : Range{lo - pad, hi + pad};
}

// The smallest of 1, 2 and 5 times a power of ten that is at least value.
double nice_step(double value) {
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double multiple : {1.0, 2.0, 5.0}) {
    if (multiple * power >= value * (1 - 1e-9)) return multiple * power;
  }
  return 10 * power;
}

// The multiples of step in the range, each k * step so that zero is exactly zero (+ 0.0 turns -0 into 0).
std::vector<double> multiples(Range range, double step) {
  std::vector<double> ticks;
  for (double k = std::ceil(range.lo / step - 1e-9); k <= std::floor(range.hi / step + 1e-9); ++k) {
    ticks.push_back(k * step + 0.0);
  }
  return ticks;
}

// Powers of ten on a log axis: with 2 and 5 times them first when the range is under 3 decades, then every
// power, every 2nd, 3rd...
std::vector<std::vector<double>> log_tick_sets(Range range) {
  std::vector<std::vector<double>> sets;
  const int first = static_cast<int>(std::ceil(std::log10(range.lo) - 1e-9));
  const int last = static_cast<int>(std::floor(std::log10(range.hi) + 1e-9));
  if (std::log10(range.hi / range.lo) < 3) {
    std::vector<double> ticks;
    for (int exponent = first - 1; exponent <= last; ++exponent) {
      for (double multiple : {1.0, 2.0, 5.0}) {
        const double value = multiple * std::pow(10.0, exponent);
        if (value >= range.lo && value <= range.hi) ticks.push_back(value);
      }
    }
    sets.push_back(ticks);
  }
  for (int every = 1; every <= std::max(1, last - first); ++every) {
    std::vector<double> ticks;
    for (int exponent = first; exponent <= last; ++exponent) {
      if (exponent % every == 0) ticks.push_back(std::pow(10.0, exponent));
    }
    sets.push_back(ticks);
  }
  return sets;
}

// The tick sets to choose from, densest first, each with at least 2 ticks. A log axis too short for 2 of its
// ticks gets linear steps instead.
std::vector<std::vector<double>> tick_sets(Range range, bool log) {
  std::vector<std::vector<double>> sets;
  if (log) {
    for (auto& ticks : log_tick_sets(range)) {
      if (ticks.size() >= 2) sets.push_back(std::move(ticks));
    }
  }
  if (!sets.empty()) return sets;
  for (double step = nice_step((range.hi - range.lo) / 12);; step = nice_step(step * 1.5)) {
    std::vector<double> ticks = multiples(range, step);
    if (log) ticks.erase(std::remove_if(ticks.begin(), ticks.end(), [](double t) { return t <= 0; }), ticks.end());
    if (ticks.size() < 2) break;
    sets.push_back(std::move(ticks));
  }
  return sets;
}

// True when neighbouring labels keep a gap: widths count along a horizontal axis, the text's height along a
// vertical one.
bool labels_fit(const Axis& axis, const std::vector<double>& ticks, const TickFormatter& format, bool horizontal,
                int scale) {
  std::vector<std::pair<double, double>> extents_px;
  for (double tick : ticks) {
    const double centre_px = axis.to_px(tick);
    const double half_px = (horizontal ? text_width_px(format(tick), scale) : kCapHeightPx * scale) / 2.0;
    extents_px.emplace_back(centre_px - half_px, centre_px + half_px);
  }
  std::sort(extents_px.begin(), extents_px.end());
  const double gap_px = (horizontal ? 12 : kCapHeightPx) * scale;
  for (size_t i = 1; i < extents_px.size(); ++i) {
    if (extents_px[i].first - extents_px[i - 1].second < gap_px) return false;
  }
  return true;
}

// The densest tick set whose labels do not overlap, or the sparsest.
std::vector<double> choose_ticks(const Axis& axis, const TickFormatter& format, bool horizontal, int scale) {
  const auto sets = tick_sets(axis.range, axis.logarithmic);
  for (const auto& ticks : sets) {
    if (labels_fit(axis, ticks, format, horizontal, scale)) return ticks;
  }
  return sets.empty() ? std::vector<double>{} : sets.back();
}

// The text cut short with "..." to fit max_px, at a character boundary.
std::string fit_text(std::string text, int max_px, int scale) {
  if (text_width_px(text, scale) <= max_px) return text;
  while (!text.empty() && text_width_px(text + "...", scale) > max_px) {
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
    if (!text.empty()) text.pop_back();
  }
  return text + "...";
}

// Where everything goes, in pixels. The frame runs along the plot's outer rows and columns.
struct Layout {
  int scale = 1;  // of text and lines: 1 up to about 800x500 px, more on larger images
  int plot_left = 0, plot_top = 0, plot_right = 0, plot_bottom = 0;
  int title_top = 0, y_label_top = 0, x_label_top = 0;
  int legend_left = 0, legend_width = 0, legend_name_px = 0;
  Axis x_axis, y_axis;
  std::vector<double> x_ticks, y_ticks;
};

// The legend's width: a sample line, a gap and the longest name, capped near 30 % of the image.
void place_legend(Layout& layout, const LineChart& chart) {
  const int s = layout.scale;
  int name_px = 0;
  for (const ChartSeries& series : chart.series) name_px = std::max(name_px, text_width_px(series.name, s));
  if (name_px == 0) return;  // no names: no legend
  const int frame_px = (2 * 8 + kSwatchPx + 6) * s;
  const int four_characters_px = text_width_px("abcd", s);
  layout.legend_name_px = std::min(name_px, std::max(four_characters_px, chart.width_px * 3 / 10 - frame_px));
  layout.legend_width = frame_px + layout.legend_name_px;
}

Layout make_layout(const LineChart& chart, const SeriesPoints& points, const TickFormatter& format_x,
                   const TickFormatter& format_y) {
  Layout layout;
  const int s = layout.scale = std::max(1, std::min(chart.width_px / 800, chart.height_px / 500));
  const int margin_px = kMarginPx * s, text_px = kGlyphHeightPx * s;
  // Top to bottom: title (twice the text size), y label, plot, tick labels, x label.
  int top_px = layout.title_top = margin_px;
  if (!chart.title.empty()) top_px += 2 * text_px + 6 * s;
  layout.y_label_top = top_px;
  if (!chart.y_label.empty()) top_px += text_px + 4 * s;
  layout.plot_top = top_px + kCapHeightPx * s / 2;  // room for the top tick label's upper half
  layout.x_label_top = chart.height_px - margin_px - text_px;
  const int x_label_px = chart.x_label.empty() ? 0 : text_px + 6 * s;
  layout.plot_bottom = chart.height_px - margin_px - x_label_px - text_px - (kTickPx + 4) * s;
  layout.y_axis = {axis_range(points, false, chart.log_y), chart.log_y, static_cast<double>(layout.plot_bottom),
                   static_cast<double>(layout.plot_top)};
  layout.y_ticks = choose_ticks(layout.y_axis, format_y, false, s);
  // Left to right: y tick labels, plot, legend.
  int y_labels_px = 0;
  for (double tick : layout.y_ticks) y_labels_px = std::max(y_labels_px, text_width_px(format_y(tick), s));
  layout.plot_left = margin_px + y_labels_px + (kTickPx + 4) * s;
  place_legend(layout, chart);
  layout.plot_right = chart.width_px - 1 - margin_px - (layout.legend_width > 0 ? layout.legend_width + margin_px : 0);
  layout.legend_left = layout.plot_right + margin_px;
  if (layout.plot_right - layout.plot_left < 20 || layout.plot_bottom - layout.plot_top < 20) {
    throw std::invalid_argument("line chart: no room left for the plot at " + std::to_string(chart.width_px) + "x" +
                                std::to_string(chart.height_px) + " px");
  }
  layout.x_axis = {axis_range(points, true, chart.log_x), chart.log_x, static_cast<double>(layout.plot_left),
                   static_cast<double>(layout.plot_right)};
  layout.x_ticks = choose_ticks(layout.x_axis, format_x, true, s);
  return layout;
}

// A 1-px rectangle's outline, its corners included.
void outline(Canvas& canvas, int left_px, int top_px, int width, int height, std::uint32_t rgb) {
  canvas.fill_rect(left_px, top_px, width, 1, rgb);
  canvas.fill_rect(left_px, top_px + height - 1, width, 1, rgb);
  canvas.fill_rect(left_px, top_px, 1, height, rgb);
  canvas.fill_rect(left_px + width - 1, top_px, 1, height, rgb);
}

// Grid lines at the ticks, the frame, and tick marks outside it.
void draw_axes(Canvas& canvas, const Layout& layout) {
  const int tick_px = kTickPx * layout.scale;
  const int height_px = layout.plot_bottom - layout.plot_top, width_px = layout.plot_right - layout.plot_left;
  for (double tick : layout.x_ticks) {
    const int x_px = static_cast<int>(std::lround(layout.x_axis.to_px(tick)));
    canvas.fill_rect(x_px, layout.plot_top, 1, height_px, kGridRgb);
    canvas.fill_rect(x_px, layout.plot_bottom + 1, 1, tick_px, kInkRgb);
  }
  for (double tick : layout.y_ticks) {
    const int y_px = static_cast<int>(std::lround(layout.y_axis.to_px(tick)));
    canvas.fill_rect(layout.plot_left, y_px, width_px, 1, kGridRgb);
    canvas.fill_rect(layout.plot_left - tick_px, y_px, tick_px, 1, kInkRgb);
  }
  outline(canvas, layout.plot_left, layout.plot_top, width_px + 1, height_px + 1, kInkRgb);
}

// Tick labels: centred under the x ticks, right-aligned beside the y ticks.
void draw_tick_labels(Canvas& canvas, const Layout& layout, const TickFormatter& format_x,
                      const TickFormatter& format_y) {
  const int s = layout.scale, label_gap_px = (kTickPx + 4) * s;
  for (double tick : layout.x_ticks) {
    const std::string text = format_x(tick);
    const int x_px = static_cast<int>(std::lround(layout.x_axis.to_px(tick)));
    draw_text(canvas, x_px - text_width_px(text, s) / 2, layout.plot_bottom + label_gap_px, text, kInkRgb, s);
  }
  for (double tick : layout.y_ticks) {
    const std::string text = format_y(tick);
    const int y_px = static_cast<int>(std::lround(layout.y_axis.to_px(tick)));
    draw_text(canvas, layout.plot_left - label_gap_px - text_width_px(text, s), y_px - kCapHeightPx * s / 2, text,
              kInkRgb, s);
  }
}

// Pixels inside which a drawing stays, bounds included.
struct Clip { int left, top, right, bottom; };

// A size_px square of pixels centred on (x_px, y_px), cut to the clip.
void stamp(Canvas& canvas, double x_px, double y_px, int size_px, std::uint32_t rgb, const Clip& clip) {
  const int left = static_cast<int>(std::floor(x_px)) - (size_px - 1) / 2;
  const int top = static_cast<int>(std::floor(y_px)) - (size_px - 1) / 2;
  for (int y = std::max(top, clip.top); y <= std::min(top + size_px - 1, clip.bottom); ++y) {
    for (int x = std::max(left, clip.left); x <= std::min(left + size_px - 1, clip.right); ++x) canvas.set(x, y, rgb);
  }
}

// A line through the points in order, stamped every half pixel. A dashed line alternates drawn and skipped
// stretches measured along the whole path, so the pattern carries on over the vertices.
void draw_path(Canvas& canvas, const std::vector<Point>& path_px, std::uint32_t rgb, bool dashed, int scale,
               const Clip& clip) {
  const double on_px = kDashOnPx * scale, period_px = (kDashOnPx + kDashOffPx) * scale;
  double travelled_px = 0;
  for (size_t i = 1; i < path_px.size(); ++i) {
    const Point from = path_px[i - 1], to = path_px[i];
    const double length_px = std::hypot(to.x - from.x, to.y - from.y);
    const int steps = std::max(1, static_cast<int>(std::ceil(length_px * 2)));
    for (int step = 0; step <= steps; ++step) {
      const double t = static_cast<double>(step) / steps;
      if (dashed && std::fmod(travelled_px + t * length_px, period_px) >= on_px) continue;
      stamp(canvas, from.x + t * (to.x - from.x), from.y + t * (to.y - from.y), kLineWidthPx * scale, rgb, clip);
    }
    travelled_px += length_px;
  }
}

void draw_series(Canvas& canvas, const Layout& layout, const LineChart& chart, const SeriesPoints& points) {
  const Clip inside{layout.plot_left + 1, layout.plot_top + 1, layout.plot_right - 1, layout.plot_bottom - 1};
  for (size_t i = 0; i < points.size(); ++i) {
    const ChartSeries& series = chart.series[i];
    std::vector<Point> path_px;
    for (const Point& p : points[i]) path_px.push_back({layout.x_axis.to_px(p.x), layout.y_axis.to_px(p.y)});
    draw_path(canvas, path_px, series.rgb, series.dashed, layout.scale, inside);
    if (!series.markers && path_px.size() > 1) continue;  // a lone point shows as a marker regardless
    for (const Point& point : path_px) stamp(canvas, point.x, point.y, kMarkerPx * layout.scale, series.rgb, inside);
  }
}

// A framed box to the right of the plot, top-aligned with it: per series a sample line and the name.
void draw_legend(Canvas& canvas, const Layout& layout, const LineChart& chart) {
  if (layout.legend_width == 0) return;
  const int s = layout.scale, pad_px = 8 * s, row_px = (kGlyphHeightPx + 6) * s;
  const int count = static_cast<int>(chart.series.size());
  const int height_px = 2 * pad_px + count * row_px - 6 * s;
  const int left = layout.legend_left, top = layout.plot_top;
  outline(canvas, left, top, layout.legend_width, height_px, kLegendFrameRgb);
  const Clip whole{0, 0, canvas.width_px - 1, canvas.height_px - 1};
  for (int i = 0; i < count; ++i) {
    const ChartSeries& series = chart.series[static_cast<size_t>(i)];
    const int text_top = top + pad_px + i * row_px;
    const double middle_px = text_top + kCapHeightPx * s / 2.0;
    const double swatch_left = left + pad_px;
    draw_path(canvas, {{swatch_left, middle_px}, {swatch_left + kSwatchPx * s, middle_px}}, series.rgb,
              series.dashed, s, whole);
    if (series.markers) stamp(canvas, swatch_left + kSwatchPx * s / 2.0, middle_px, kMarkerPx * s, series.rgb, whole);
    draw_text(canvas, left + pad_px + (kSwatchPx + 6) * s, text_top, fit_text(series.name, layout.legend_name_px, s),
              kInkRgb, s);
  }
}

// The title centred over the plot at twice the text size, the y label above its axis, the x label under the plot.
void draw_labels(Canvas& canvas, const Layout& layout, const LineChart& chart) {
  const int s = layout.scale, margin_px = kMarginPx * s;
  const int centre_px = (layout.plot_left + layout.plot_right) / 2;
  const int title_left = std::max(margin_px, centre_px - text_width_px(chart.title, 2 * s) / 2);
  draw_text(canvas, title_left, layout.title_top, chart.title, kInkRgb, 2 * s);
  draw_text(canvas, margin_px, layout.y_label_top, chart.y_label, kInkRgb, s);
  const int x_label_left = std::max(margin_px, centre_px - text_width_px(chart.x_label, s) / 2);
  draw_text(canvas, x_label_left, layout.x_label_top, chart.x_label, kInkRgb, s);
}

}  // namespace

std::string format_general(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string format_si(double value) {
  const double magnitude = std::abs(value);
  if (!std::isfinite(value) || magnitude < 1000 || magnitude >= 1e18) return format_general(value);
  // Round to 4 significant digits before choosing the prefix, so that 999999 reads "1M" rather than "1000k".
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", magnitude);
  double scaled = std::strtod(text, nullptr);
  int prefix = -1;
  for (; scaled >= 1000; scaled /= 1000) ++prefix;
  std::snprintf(text, sizeof text, "%s%.4g%c", value < 0 ? "-" : "", scaled, "kMGTPE"[prefix]);
  return text;
}

std::string render_png(const LineChart& chart) {
  const SeriesPoints points = drawable_points(chart);
  const TickFormatter format_x = chart.format_x ? chart.format_x : TickFormatter(format_si);
  const TickFormatter format_y = chart.format_y ? chart.format_y : TickFormatter(format_general);
  const Layout layout = make_layout(chart, points, format_x, format_y);
  Canvas canvas(chart.width_px, chart.height_px);
  draw_axes(canvas, layout);
  draw_series(canvas, layout, chart, points);
  draw_tick_labels(canvas, layout, format_x, format_y);
  draw_legend(canvas, layout, chart);
  draw_labels(canvas, layout, chart);
  return encode_png(canvas);
}

void write_png(const LineChart& chart, const std::string& path) {
  const std::string png = render_png(chart);
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(png.data(), static_cast<std::streamsize>(png.size()));
  if (out) out.close();
  if (!out) {
    const std::string reason = errno != 0 ? std::string(": ") + std::strerror(errno) : "";
    throw std::runtime_error("cannot write the chart to " + path + reason);
  }
}

}  // namespace treering::cli
