#include "plot_chart.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "treering/analysis/decode_columns.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using topologies::InputError;

// The column's unit: the decode rows' own list, else what the name ends in (the CLI's convention: _s, _bytes).
std::string unit_of(const std::string& column) {
  for (const DecodeColumn& c : decode_columns()) {
    if (c.name == column || c.json_path == column) return std::string(c.unit);
  }
  if (column.ends_with("_s") || column.ends_with("_s_low") || column.ends_with("_s_high")) return "s";
  if (column.ends_with("_bytes") || column == "bytes") return "bytes";
  if (column.ends_with("_Bps")) return "B/s";
  if (column == "seq_len" || column == "tokens") return "tokens";
  return "";
}

TickFormatter ticks_for(const std::string& unit) {
  if (unit == "s") return format_duration_label;
  if (unit == "bytes") return [](double bytes) { return topologies::format_bytes(bytes); };
  if (unit == "B/s") return [](double rate) { return topologies::format_bandwidth(rate); };
  return [](double value) { return topologies::format_si(value); };  // 80k, 0.5, 16
}

std::string default_title(const PlotSpec& spec) {
  std::string title = spec.y + " against " + spec.x;
  for (std::size_t i = 0; i < spec.series.size(); ++i) title += (i ? ", " : ", by ") + spec.series[i];
  return title;
}

bool drawable(double value, bool logarithmic) { return std::isfinite(value) && (!logarithmic || value > 0); }

// "algo=tree engine=sim": the row's values of the series columns.
std::string series_name(const DataTable& table, const std::vector<std::size_t>& columns,
                        const std::vector<TableCell>& row) {
  std::string name;
  for (std::size_t c : columns) {
    const bool tokens = row[c].number && unit_of(table.columns[c]) == "tokens";  // seq_len=128k
    const std::string value = tokens ? topologies::format_token_count(std::llround(*row[c].number)) : row[c].text;
    name += (name.empty() ? "" : " ") + table.columns[c] + "=" + value;
  }
  return name;
}

// The points sorted by x (stable: rows with the same x keep their order).
void sort_by_x(ChartSeries& series) {
  std::vector<std::size_t> order(series.x.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return series.x[a] < series.x[b]; });
  ChartSeries sorted = series;
  for (std::size_t i = 0; i < order.size(); ++i) {
    sorted.x[i] = series.x[order[i]];
    sorted.y[i] = series.y[order[i]];
  }
  series = std::move(sorted);
}

}  // namespace

LineChart plot_chart(const DataTable& table, const PlotSpec& spec) {
  static const std::uint32_t kColours[] = {0x1f77b4, 0xd62728, 0x2ca02c, 0x9467bd, 0xff7f0e,
                                           0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  const std::size_t x = table.numeric_column(spec.x), y = table.numeric_column(spec.y);
  std::vector<std::size_t> groups;
  for (const std::string& name : spec.series) groups.push_back(table.column(name));
  LineChart chart;
  chart.title = spec.title.empty() ? default_title(spec) : spec.title;
  chart.x_label = spec.x;
  chart.y_label = spec.y;
  chart.log_x = spec.log_x;
  chart.log_y = spec.log_y;
  chart.format_x = ticks_for(unit_of(spec.x));
  chart.format_y = ticks_for(unit_of(spec.y));
  std::map<std::string, std::size_t> index;  // series name -> its place in chart.series
  std::size_t points = 0;
  for (const auto& row : table.rows) {
    if (!row[x].number || !row[y].number) continue;
    const std::string name = series_name(table, groups, row);
    if (index.emplace(name, chart.series.size()).second) {
      ChartSeries& series = chart.series.emplace_back();
      const std::size_t n = chart.series.size() - 1;
      series.name = name;
      series.rgb = kColours[n % 10];
      series.dashed = (n / 10) % 2 == 1;
    }
    ChartSeries& series = chart.series[index.at(name)];
    series.x.push_back(*row[x].number);
    series.y.push_back(*row[y].number);
    if (drawable(series.x.back(), spec.log_x) && drawable(series.y.back(), spec.log_y)) ++points;
  }
  if (points == 0) {
    throw InputError({table.source, 0, 0}, "no row has a point to draw: both '" + spec.x + "' and '" + spec.y + "'" +
                                               (spec.log_x || spec.log_y ? ", positive on a log axis" : ""));
  }
  for (ChartSeries& series : chart.series) sort_by_x(series);
  return chart;
}

std::string chart_kind(const std::string& path) {
  if (path.ends_with(".png")) return ".png";
  if (path.ends_with(".svg")) return ".svg";
  throw topologies::InputError("-o " + path + ": name a .png or .svg file");
}

void write_chart(const LineChart& chart, const std::string& path) {
  const std::string kind = chart_kind(path);
  const ChartLayout layout = lay_out_chart(chart);
  if (kind == ".png")
    write_png(layout, path);
  else
    write_svg(layout, path);
}

void plot_file(const std::string& input, const PlotSpec& spec, const std::string& output) {
  chart_kind(output);  // before reading anything
  write_chart(plot_chart(read_table(input), spec), output);
}

}  // namespace treering::cli
