// `treering plot` and Python's plot(): any rows a command wrote (plot_table.hpp) as a line chart, laid out and drawn
// by the main job's chart code (line_chart.hpp: lay_out_chart, then cairo's PNG or SVG).
#pragma once

#include <string>
#include <vector>

#include "line_chart.hpp"
#include "plot_table.hpp"

namespace treering::cli {

struct PlotSpec {
  std::string x, y;                 // numeric columns
  std::vector<std::string> series;  // columns whose values group the rows: one line per distinct combination
  bool log_x = false, log_y = false;
  std::string title;  // empty: "Y against X" (", by SERIES")
};

// One series per distinct value of the series columns (none: one series of every row), in the order the rows
// first show them, named "algo=tree" ("algo=tree seq_len=128k" for several; token counts as 80k, 1M); each
// series' points sorted by x; a row with an empty x or y is left out. Colours cycle through ten, solid, then the
// same ten dashed. Tick labels by the column's unit (decode_columns.hpp, else the name's ending): seconds as
// "20 µs", bytes as "80 GB", others as "80k". Throws topologies::InputError "SOURCE: error: ..." for a missing or
// non-numeric column, or when no row has a point to draw (both values, positive on a log axis).
LineChart plot_chart(const DataTable& table, const PlotSpec& spec);

// ".png" or ".svg" from the path; throws std::invalid_argument "-o PATH: name a .png or .svg file" otherwise.
std::string chart_kind(const std::string& path);

// The chart laid out and written as the path's kind (topologies::write_output_file: whole or not at all).
void write_chart(const LineChart& chart, const std::string& path);

// read_table, plot_chart, write_chart: the command's and Python's whole job. The output's kind is checked first.
void plot_file(const std::string& input, const PlotSpec& spec, const std::string& output);

}  // namespace treering::cli
