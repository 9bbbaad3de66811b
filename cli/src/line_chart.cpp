// The chart's layout: checks the chart, keeps the drawable points, chooses each axis' range and ticks and labels
// them. No pixel is placed here (line_chart_cairo.cpp does that).
#include "line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <utility>

#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
namespace {

// At most one tick per this many px of the image: the plot takes about 3/4 of it, so 120 px leave x labels such
// as "500k" (about 35 px at 13 px text) some 50 px apart, and 60 px leave y labels 30 px apart.
constexpr int kPxPerXTick = 120, kPxPerYTick = 60;
constexpr double kPadFraction = 0.05;  // room between the outermost points and the frame, of the axis' span

struct Range {
  double lo, hi;
};

bool drawable(double value, bool log) { return std::isfinite(value) && (!log || value > 0); }

// Each series with the points the axes can show; throws std::invalid_argument when none is left.
std::vector<SeriesLayout> drawable_series(const LineChart& chart) {
  std::vector<SeriesLayout> laid_out;
  std::size_t total = 0;
  for (const ChartSeries& series : chart.series) {
    if (series.x.size() != series.y.size()) {
      throw std::logic_error("line chart: series '" + series.name + "' has " + std::to_string(series.x.size()) +
                             " x values but " + std::to_string(series.y.size()) + " y values");
    }
    SeriesLayout kept{series.name, {}, series.rgb, series.dashed, series.markers};
    for (std::size_t i = 0; i < series.x.size(); ++i) {
      if (drawable(series.x[i], chart.log_x) && drawable(series.y[i], chart.log_y)) {
        kept.points.push_back({series.x[i], series.y[i]});
      }
    }
    total += kept.points.size();
    laid_out.push_back(std::move(kept));
  }
  if (total == 0) throw topologies::InputError("line chart: no point to draw (log axes leave out values <= 0)");
  return laid_out;
}

// The axis limits: the data's extent and 5 % of it either side, in decades on a log axis; a single value gets
// room around it (a factor of 2 either way on a log axis, 10 % on a linear one, or 1 around zero).
// Worked example: x from 1e3 to 1e5 on a log axis spans 2 decades; 0.1 decade either side gives 10^2.9 to 10^5.1.
Range axis_range(const std::vector<SeriesLayout>& series, bool along_x, bool log) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const SeriesLayout& one : series) {
    for (const ChartPoint& point : one.points) {
      const double value = along_x ? point.x : point.y;
      lo = std::min(lo, log ? std::log10(value) : value);
      hi = std::max(hi, log ? std::log10(value) : value);
    }
  }
  if (hi - lo <= 1e-9 * std::max(1.0, std::abs(hi))) {
    const double half = log ? std::log10(2.0) : (lo == 0 ? 1.0 : std::abs(lo) * 0.1);
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

// A tick set to choose from; on a log axis, what goes between its ticks unlabelled.
struct TickSet {
  std::vector<double> ticks, minor;
};

// The values m x 10^e in the range for the given multipliers m and every e that can reach it.
std::vector<double> decade_multiples(Range range, std::initializer_list<double> multipliers) {
  std::vector<double> values;
  const int first = static_cast<int>(std::floor(std::log10(range.lo)));
  const int last = static_cast<int>(std::floor(std::log10(range.hi)));
  for (int exponent = first; exponent <= last; ++exponent) {
    for (double multiple : multipliers) {
      const double value = multiple * std::pow(10.0, exponent);
      if (value >= range.lo * (1 - 1e-12) && value <= range.hi * (1 + 1e-12)) values.push_back(value);
    }
  }
  return values;
}

// Log axis sets, densest first: 1-2-5 x 10^n, then every power of ten, every 2nd, 3rd ... The minor ticks are
// 2..9 x 10^n (less the labelled ones) while every power is labelled, then the powers left out.
std::vector<TickSet> log_tick_sets(Range range) {
  const std::vector<double> powers = decade_multiples(range, {1});
  const std::vector<double> all_multiples = decade_multiples(range, {2, 3, 4, 5, 6, 7, 8, 9});
  std::vector<TickSet> sets;
  sets.push_back({decade_multiples(range, {1, 2, 5}), decade_multiples(range, {3, 4, 6, 7, 8, 9})});
  for (std::size_t every = 1; every <= std::max<std::size_t>(1, powers.size()); ++every) {
    TickSet set;
    for (std::size_t i = 0; i < powers.size(); ++i) {
      const long long exponent = std::llround(std::log10(powers[i]));
      (exponent % static_cast<long long>(every) == 0 ? set.ticks : set.minor).push_back(powers[i]);
    }
    if (every == 1) set.minor = all_multiples;
    sets.push_back(std::move(set));
  }
  return sets;
}

// The tick sets to choose from, densest first, each with at least 2 ticks. A log axis too short for 2 of its
// ticks gets linear steps instead (its positive ones).
std::vector<TickSet> tick_sets(Range range, bool log, std::size_t max_ticks) {
  std::vector<TickSet> sets;
  if (log) {
    for (TickSet& set : log_tick_sets(range)) {
      if (set.ticks.size() >= 2) sets.push_back(std::move(set));
    }
    if (!sets.empty()) return sets;
  }
  for (double step = nice_step((range.hi - range.lo) / static_cast<double>(max_ticks));; step = nice_step(step * 1.5)) {
    std::vector<double> ticks = multiples(range, step);
    if (log) ticks.erase(std::remove_if(ticks.begin(), ticks.end(), [](double t) { return t <= 0; }), ticks.end());
    if (ticks.size() < 2) break;
    sets.push_back({std::move(ticks), {}});
  }
  return sets;
}

// The axis: its range, the densest tick set with at most max_ticks ticks (or the sparsest), labelled.
ChartAxis lay_out_axis(const std::string& title, Range range, bool log, std::size_t max_ticks,
                       const TickFormatter& format) {
  ChartAxis axis{title, log, range.lo, range.hi, {}, {}};
  const std::vector<TickSet> sets = tick_sets(range, log, max_ticks);
  if (sets.empty()) return axis;
  auto fits = [&](const TickSet& set) { return set.ticks.size() <= max_ticks; };
  auto chosen = std::find_if(sets.begin(), sets.end(), fits);
  const TickSet& set = chosen != sets.end() ? *chosen : sets.back();
  for (double value : set.ticks) axis.ticks.push_back({value, format(value)});
  axis.minor_ticks = set.minor;
  std::sort(axis.minor_ticks.begin(), axis.minor_ticks.end());
  return axis;
}

}  // namespace

void detail::check_chart_size(int width_px, int height_px) {
  constexpr int kMinWidthPx = 200, kMinHeightPx = 150, kMaxSidePx = 16384;
  if (width_px < kMinWidthPx || height_px < kMinHeightPx || width_px > kMaxSidePx || height_px > kMaxSidePx) {
    throw topologies::InputError("line chart: " + std::to_string(width_px) + "x" + std::to_string(height_px) +
                                 " px is outside 200x150 to 16384x16384 px");
  }
}

std::string format_general(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string format_duration_label(double seconds) {
  std::string text = topologies::format_duration(seconds);
  if (text.ends_with(" us")) text.replace(text.size() - 2, 1, "\xC2\xB5");
  return text;
}

ChartLayout lay_out_chart(const LineChart& chart) {
  detail::check_chart_size(chart.width_px, chart.height_px);
  ChartLayout layout;
  layout.title = chart.title;
  layout.width_px = chart.width_px;
  layout.height_px = chart.height_px;
  layout.series = drawable_series(chart);
  const TickFormatter format_x = chart.format_x ? chart.format_x : [](double v) { return topologies::format_si(v); };
  const TickFormatter format_y = chart.format_y ? chart.format_y : TickFormatter(format_general);
  const auto max_x_ticks = static_cast<std::size_t>(std::max(2, chart.width_px / kPxPerXTick));
  const auto max_y_ticks = static_cast<std::size_t>(std::max(2, chart.height_px / kPxPerYTick));
  layout.x_axis =
      lay_out_axis(chart.x_label, axis_range(layout.series, true, chart.log_x), chart.log_x, max_x_ticks, format_x);
  layout.y_axis =
      lay_out_axis(chart.y_label, axis_range(layout.series, false, chart.log_y), chart.log_y, max_y_ticks, format_y);
  for (std::size_t i = 0; i < layout.series.size(); ++i) {
    if (!layout.series[i].name.empty()) layout.legend.push_back(i);
  }
  return layout;
}

}  // namespace treering::cli
