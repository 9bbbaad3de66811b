// The chart's layout: ranges, ticks and their labels, minor ticks, series and legend, each derived by hand from
// the data (5 % of the span as room either side, 1-2-5 steps, at most one tick per 120 px across and 60 px down).
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "line_chart.hpp"

using treering::cli::ChartAxis;
using treering::cli::ChartLayout;
using treering::cli::ChartSeries;
using treering::cli::lay_out_chart;
using treering::cli::LineChart;

namespace {

std::vector<std::string> labels(const ChartAxis& axis) {
  std::vector<std::string> texts;
  for (const auto& tick : axis.ticks) texts.push_back(tick.label);
  return texts;
}

std::vector<double> values(const ChartAxis& axis) {
  std::vector<double> ticks;
  for (const auto& tick : axis.ticks) ticks.push_back(tick.value);
  return ticks;
}

// One unnamed series through the points.
LineChart chart_of(std::vector<double> x, std::vector<double> y, bool log_x, bool log_y) {
  LineChart chart;
  chart.log_x = log_x;
  chart.log_y = log_y;
  chart.series.push_back({"", std::move(x), std::move(y)});
  return chart;
}

void check_close(const std::vector<double>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    CHECK(actual[i] == doctest::Approx(expected[i]).scale(1e-12).epsilon(1e-9));
}

}  // namespace

TEST_CASE("a log axis over 2 decades: 1-2-5 ticks in SI, the other multiples as minor ticks") {
  // x from 1e3 to 1e5: 2 decades, 0.1 decade of room either side -> 10^2.9 (794.3) to 10^5.1 (125893).
  // 1, 2, 5 x 10^n inside: 1k 2k 5k 10k 20k 50k 100k, 7 ticks; 960 px allow 960 / 120 = 8.
  const ChartLayout layout = lay_out_chart(chart_of({1e3, 1e4, 1e5}, {1, 2, 3}, true, false));
  CHECK(layout.x_axis.logarithmic);
  CHECK(layout.x_axis.min == doctest::Approx(std::pow(10.0, 2.9)).scale(1e-12));
  CHECK(layout.x_axis.max == doctest::Approx(std::pow(10.0, 5.1)).scale(1e-12));
  CHECK(labels(layout.x_axis) == std::vector<std::string>{"1k", "2k", "5k", "10k", "20k", "50k", "100k"});
  check_close(values(layout.x_axis), {1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5});
  // Minor: 800 and 900 under 1k; 3, 4, 6, 7, 8, 9 x 1k and x 10k; nothing from 300k (over 125893).
  check_close(layout.x_axis.minor_ticks, {800, 900, 3e3, 4e3, 6e3, 7e3, 8e3, 9e3, 3e4, 4e4, 6e4, 7e4, 8e4, 9e4});
}

TEST_CASE("a log axis over 6 decades: every power of ten, or every 3rd on a narrow chart") {
  // y from 1 to 1e6: 10^-0.3 to 10^6.3 with the room. 1-2-5 gives 19 ticks, every power 7 (1 .. 1e6).
  LineChart chart = chart_of({1, 2}, {1, 1e6}, false, true);
  ChartLayout layout = lay_out_chart(chart);  // 600 px allow 600 / 60 = 10 ticks; labels by printf's %g
  CHECK(labels(layout.y_axis) == std::vector<std::string>{"1", "10", "100", "1000", "10000", "100000", "1e+06"});
  // Minor: 0.6 .. 0.9 over 10^-0.3 (0.501), 2..9 x 10^0 .. 10^5; 2 x 10^6 is over 10^6.3 (1.995e6).
  CHECK(layout.y_axis.minor_ticks.size() == 4 + 6 * 8);
  CHECK(layout.y_axis.minor_ticks.front() == doctest::Approx(0.6).scale(1e-12));
  CHECK(layout.y_axis.minor_ticks.back() == doctest::Approx(9e5).scale(1e-12));
  // 150 px allow 2 ticks: every 2nd power (1, 100, 1e4, 1e6) is 4, every 3rd (1, 1000, 1e6) 3, every 4th
  // (1, 1e4) 2: that one, with the powers it skips as minor ticks.
  chart.height_px = 150;
  layout = lay_out_chart(chart);
  check_close(values(layout.y_axis), {1, 1e4});
  check_close(layout.y_axis.minor_ticks, {10, 100, 1000, 1e5, 1e6});
}

TEST_CASE("a linear axis: 1-2-5 steps from zero, no more ticks than the size allows") {
  // y from -3 to 7: span 10, room 0.5 -> -3.5 to 7.5. 600 px allow 10 ticks: a step of 1 gives 11 (-3 .. 7),
  // a step of 2 gives -2, 0, 2, 4, 6.
  ChartLayout layout = lay_out_chart(chart_of({0, 1}, {-3, 7}, false, false));
  CHECK_FALSE(layout.y_axis.logarithmic);
  CHECK(layout.y_axis.min == doctest::Approx(-3.5).scale(1e-12));
  CHECK(layout.y_axis.max == doctest::Approx(7.5).scale(1e-12));
  CHECK(labels(layout.y_axis) == std::vector<std::string>{"-2", "0", "2", "4", "6"});
  CHECK(layout.y_axis.minor_ticks.empty());
  // x from 0 to 1: -0.05 to 1.05; 960 px allow 8 ticks: 0.1 gives 11, 0.2 gives 0, 0.2, .. 1 (6).
  CHECK(labels(layout.x_axis) == std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"});
}

TEST_CASE("one value gets room around it: a factor of 2 on a log axis, 10 % on a linear one") {
  // log: 1e-3 / 2 to 1e-3 * 2, then 5 % of those 0.602 decades (0.0301) either side.
  const ChartLayout layout = lay_out_chart(chart_of({5, 5}, {1e-3, 1e-3}, false, true));
  const double room = std::pow(10.0, 0.05 * 2 * std::log10(2.0));
  CHECK(layout.y_axis.min == doctest::Approx(0.5e-3 / room).scale(1e-12));
  CHECK(layout.y_axis.max == doctest::Approx(2e-3 * room).scale(1e-12));
  CHECK(labels(layout.y_axis) == std::vector<std::string>{"0.0005", "0.001", "0.002"});  // format_general
  // linear: 5 +- 0.5, then 5 % of 1 either side -> 4.45 to 5.55.
  CHECK(layout.x_axis.min == doctest::Approx(4.45).scale(1e-12));
  CHECK(layout.x_axis.max == doctest::Approx(5.55).scale(1e-12));
}

TEST_CASE("a log axis too short for two of its 1-2-5 ticks gets linear steps") {
  // y from 3 to 4: no 1, 2 or 5 x 10^n in 2.96 .. 4.06; linear steps: 0.11 rounds up to 0.2 -> 3, 3.2, .. 4.
  const ChartLayout layout = lay_out_chart(chart_of({1, 2}, {3, 4}, false, true));
  CHECK(labels(layout.y_axis) == std::vector<std::string>{"3", "3.2", "3.4", "3.6", "3.8", "4"});
  CHECK(layout.y_axis.minor_ticks.empty());
}

TEST_CASE("series keep their drawable points in order; the legend lists the named ones") {
  LineChart chart;
  chart.title = "latency";
  chart.x_label = "tokens";
  chart.y_label = "seconds";
  chart.series.push_back({"ring", {1, 2, 0, 4, NAN}, {1, 2, 3, -1, 5}, 0xff0000, true, false});
  chart.series.push_back({"", {1, 2}, {3, 4}, 0x00ff00});
  chart.series.push_back({"tree", {-1}, {1}, 0x0000ff});  // nothing drawable on a log x axis
  const ChartLayout layout = lay_out_chart(chart);
  CHECK(layout.title == "latency");
  CHECK(layout.x_axis.title == "tokens");
  CHECK(layout.y_axis.title == "seconds");
  CHECK(layout.width_px == 960);
  CHECK(layout.height_px == 600);
  REQUIRE(layout.series.size() == 3);
  // ring: x 0 is not on a log axis, y -1 neither, NaN nowhere: (1, 1) and (2, 2) are left.
  REQUIRE(layout.series[0].points.size() == 2);
  CHECK(layout.series[0].points[1].x == 2);
  CHECK(layout.series[0].points[1].y == 2);
  CHECK(layout.series[0].name == "ring");
  CHECK(layout.series[0].rgb == 0xff0000);
  CHECK(layout.series[0].dashed);
  CHECK_FALSE(layout.series[0].markers);
  CHECK(layout.series[1].points.size() == 2);
  CHECK(layout.series[2].points.empty());
  CHECK(layout.legend == std::vector<std::size_t>{0, 2});
}

TEST_CASE("custom tick formatters label the ticks, and are given powers of ten on a log axis") {
  LineChart chart = chart_of({1, 1000}, {1, 1000}, true, true);
  std::set<double> formatted_x;
  chart.format_x = [&](double value) {
    formatted_x.insert(value);
    return "x" + std::to_string(formatted_x.size());
  };
  chart.format_y = [](double) { return std::string("y"); };
  const ChartLayout layout = lay_out_chart(chart);
  // 10^-0.15 .. 10^3.15: 1-2-5 gives 10 ticks (1 .. 1000), over 8; every power: 1, 10, 100, 1000.
  CHECK(formatted_x == std::set<double>{1, 10, 100, 1000});
  CHECK(labels(layout.x_axis) == std::vector<std::string>{"x1", "x2", "x3", "x4"});
  for (const auto& tick : layout.y_axis.ticks) CHECK(tick.label == "y");
}

TEST_CASE("charts that cannot be laid out are refused") {
  LineChart chart;
  CHECK_THROWS_AS(lay_out_chart(chart), std::invalid_argument);  // no series
  chart.series.push_back({"empty", {}, {}});
  CHECK_THROWS_AS(lay_out_chart(chart), std::invalid_argument);  // no points
  chart.series[0] = {"zeros on log axes", {0, -1}, {1, 2}};
  CHECK_THROWS_AS(lay_out_chart(chart), std::invalid_argument);
  chart.series[0] = {"not finite", {1, 2}, {std::nan(""), HUGE_VAL}};
  CHECK_THROWS_AS(lay_out_chart(chart), std::invalid_argument);
  chart.series[0] = {"mismatched", {1, 2, 3}, {1, 2}};
  CHECK_THROWS_WITH_AS(lay_out_chart(chart), "line chart: series 'mismatched' has 3 x values but 2 y values",
                       std::logic_error);
  chart.series[0] = {"fine", {1, 2}, {1, 2}};
  CHECK_NOTHROW(lay_out_chart(chart));
  for (auto [width_px, height_px] : {std::pair{199, 150}, std::pair{200, 149}, std::pair{16385, 600}}) {
    chart.width_px = width_px;
    chart.height_px = height_px;
    CHECK_THROWS_AS(lay_out_chart(chart), std::invalid_argument);
  }
  chart.width_px = 200;
  chart.height_px = 150;
  CHECK_NOTHROW(lay_out_chart(chart));
}
