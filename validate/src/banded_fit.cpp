#include "treering/validate/banded_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "treering/validate/report.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate {
namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();
constexpr double kTimingFloor = 1e-3;  // relative: no timing is more exact than 0.1 %

struct Point {
  double bytes;
  double time_s;
};

struct Line {
  double latency_s = 0;
  double seconds_per_byte = 0;
  double rss = 0;  // sum of squared relative residuals
};

// Least squares of alpha x_i + b y_i ~= 1 with x_i = 1 / t_i, y_i = n_i / t_i (the relative residual), over
// points [first, last); alpha >= 0 (else the best line through the origin), b > 0 (else no line).
std::optional<Line> fit_line(const std::vector<Point>& points, size_t first, size_t last) {
  double sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0;
  for (size_t i = first; i < last; ++i) {
    const double x = 1 / points[i].time_s, y = points[i].bytes / points[i].time_s;
    sxx += x * x, sxy += x * y, syy += y * y, sx += x, sy += y;
  }
  Line line;
  const double determinant = sxx * syy - sxy * sxy;
  if (determinant > 1e-12 * sxx * syy) {
    line.latency_s = (sx * syy - sy * sxy) / determinant;
    line.seconds_per_byte = (sxx * sy - sxy * sx) / determinant;
  }
  if (!(determinant > 1e-12 * sxx * syy) || line.latency_s < 0) {
    line.latency_s = 0;
    line.seconds_per_byte = sy / syy;
  }
  if (!(line.seconds_per_byte > 0) || !std::isfinite(line.seconds_per_byte)) return std::nullopt;
  for (size_t i = first; i < last; ++i) {
    const double r = (line.latency_s + points[i].bytes * line.seconds_per_byte - points[i].time_s) / points[i].time_s;
    line.rss += r * r;
  }
  return line;
}

struct Segmentation {
  double rss = kInfinite;
  std::vector<size_t> starts;  // index into the distinct sizes where each band begins
};

// The best split of the distinct sizes into exactly `bands` contiguous bands of >= 2 sizes each (dynamic
// programming over the segments' costs; sizes are few).
Segmentation best_split(const std::vector<Point>& points, const std::vector<size_t>& first_point_of_size, int bands) {
  const size_t m = first_point_of_size.size() - 1;  // distinct sizes; the last entry is points.size()
  std::vector<std::vector<double>> cost(m, std::vector<double>(m + 1, kInfinite));
  for (size_t a = 0; a < m; ++a) {
    for (size_t b = a + 2; b <= m; ++b) {
      if (auto line = fit_line(points, first_point_of_size[a], first_point_of_size[b])) cost[a][b] = line->rss;
    }
  }
  // best[k][b]: the lowest cost of k bands covering sizes [0, b); from[k][b]: where the last one starts.
  std::vector<std::vector<double>> best(static_cast<size_t>(bands) + 1, std::vector<double>(m + 1, kInfinite));
  std::vector<std::vector<size_t>> from(best.size(), std::vector<size_t>(m + 1, 0));
  best[0][0] = 0;
  for (size_t k = 1; k <= static_cast<size_t>(bands); ++k) {
    for (size_t b = 2; b <= m; ++b) {
      for (size_t a = 0; a + 2 <= b; ++a) {
        const double total = best[k - 1][a] + cost[a][b];
        if (total < best[k][b]) best[k][b] = total, from[k][b] = a;
      }
    }
  }
  Segmentation out;
  out.rss = best[static_cast<size_t>(bands)][m];
  if (!std::isfinite(out.rss)) return out;
  for (size_t k = static_cast<size_t>(bands), b = m; k > 0; b = from[k][b], --k)
    out.starts.insert(out.starts.begin(), from[k][b]);
  return out;
}

std::vector<Point> sorted_points(const std::vector<double>& sizes_bytes, const std::vector<double>& times_s) {
  if (sizes_bytes.size() != times_s.size()) throw std::logic_error("sizes and times differ in length");
  std::vector<Point> points;
  for (size_t i = 0; i < sizes_bytes.size(); ++i) {
    if (!(times_s[i] > 0) || !std::isfinite(times_s[i]))
      throw topologies::InputError("measured times must be positive");
    if (!(sizes_bytes[i] >= 0) || !std::isfinite(sizes_bytes[i]))
      throw topologies::InputError("sizes must be finite and >= 0");
    points.push_back({sizes_bytes[i], times_s[i]});
  }
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
  return points;
}

}  // namespace

BandedFit fit_size_bands(const std::vector<double>& sizes_bytes, const std::vector<double>& times_s, int max_bands) {
  const std::vector<Point> points = sorted_points(sizes_bytes, times_s);
  std::vector<size_t> first_point_of_size;
  for (size_t i = 0; i < points.size(); ++i) {
    if (i == 0 || points[i].bytes != points[i - 1].bytes) first_point_of_size.push_back(i);
  }
  if (first_point_of_size.size() < 2)
    throw topologies::InputError("a latency-bandwidth fit needs at least two different sizes");
  first_point_of_size.push_back(points.size());
  const double n = static_cast<double>(points.size());
  Segmentation chosen;
  double chosen_bic = kInfinite;
  for (int bands = 1; bands <= std::max(1, max_bands); ++bands) {
    const Segmentation s = best_split(points, first_point_of_size, bands);
    if (!std::isfinite(s.rss)) continue;
    const double bic =
        n * std::log(std::max(s.rss, n * kTimingFloor * kTimingFloor) / n) + (3.0 * bands - 1) * std::log(n);
    if (bic < chosen_bic - 1e-9) chosen_bic = bic, chosen = s;
  }
  if (chosen.starts.empty())
    throw topologies::InputError(
        "no latency-bandwidth line with a positive bandwidth fits (the times do not grow with size)");
  BandedFit fit;
  for (size_t k = 0; k < chosen.starts.size(); ++k) {
    const size_t first = first_point_of_size[chosen.starts[k]];
    const size_t last = k + 1 < chosen.starts.size() ? first_point_of_size[chosen.starts[k + 1]] : points.size();
    const Line line = *fit_line(points, first, last);
    const double below = k == 0 ? 0.0 : points[first - 1].bytes;
    const double from = k == 0 ? 0.0 : below > 0 ? std::sqrt(below * points[first].bytes) : points[first].bytes / 2;
    fit.bands.push_back({from, line.latency_s, 1 / line.seconds_per_byte});
  }
  std::vector<double> abs_errors;
  for (size_t i = 0; i < sizes_bytes.size(); ++i) {
    const topologies::SizeBand& band = topologies::band_of(fit.bands, sizes_bytes[i]);
    fit.rel_errors.push_back((band.latency_s + sizes_bytes[i] / band.bandwidth_Bps - times_s[i]) / times_s[i]);
    abs_errors.push_back(std::abs(fit.rel_errors.back()));
  }
  const ErrorSummary summary = summary_of(Engine::model, "fit", abs_errors);
  fit.median_abs_rel_error = summary.median_abs_rel_error;
  fit.max_abs_rel_error = summary.max_abs_rel_error;
  return fit;
}

}  // namespace treering::validate
