// `treering` with no arguments: the default comparison a newcomer sees first. Tree vs ring (and the improved
// combines) on 16 DGX H100 nodes (128 GPUs), paper-mha16, 80k -> 5.12M tokens, by the model and the simulator;
// a table on stdout, the rows and the figure (PNG and SVG) in treering-out/.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "replay_progress.hpp"
#include "commands.hpp"
#include "line_chart.hpp"
#include "treering/analysis/sweep.hpp"
#include "sweep_table.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

constexpr const char* kOutputDir = "treering-out";

SweepSpec default_comparison() {
  SweepSpec spec;
  spec.cluster = "dgx-h100";
  spec.nodes = {16};
  spec.workloads = {"paper-mha16"};
  spec.seq_lens = topologies::parse_token_counts("80k:5.12M:x2");
  spec.algorithms = model::paper_decode_algorithms();
  spec.engines = {validate::Engine::model, validate::Engine::sim};
  return spec;
}

// The colour at 55 % of its brightness: 0xd62728 -> 0x751516 (214, 39, 40 times 0.55, rounded down: 117, 21, 22).
std::uint32_t darker(std::uint32_t rgb) {
  std::uint32_t shade = 0;
  for (int shift : {16, 8, 0}) shade |= static_cast<std::uint32_t>(((rgb >> shift) & 0xff) * 0.55) << shift;
  return shade;
}

// Latency against context length, one colour per algorithm: the model solid, the simulator dashed in a darker
// shade, so that where the two agree the dashes still show on the solid line.
LineChart latency_chart(const std::vector<DecodeRow>& rows) {
  static const std::uint32_t kColours[] = {0xd62728, 0x1f77b4, 0x2ca02c, 0x9467bd, 0xff7f0e};
  LineChart chart;
  chart.title = "Decode attention latency per layer: 16 x DGX H100 (128 GPUs), paper-mha16";
  chart.x_label = "context length (tokens)";
  chart.y_label = "latency per layer";
  const auto& algorithms = model::paper_decode_algorithms();
  for (std::size_t a = 0; a < algorithms.size(); ++a) {
    for (const validate::Engine engine : {validate::Engine::model, validate::Engine::sim}) {
      ChartSeries series;
      series.dashed = engine == validate::Engine::sim;
      series.name = std::string(model::to_string(algorithms[a])) + (series.dashed ? " (simulated)" : "");
      series.rgb = series.dashed ? darker(kColours[a % 5]) : kColours[a % 5];
      series.markers = !series.dashed;
      for (const DecodeRow& row : rows) {
        if (row.result.algorithm != algorithms[a] || row.engine != engine) continue;
        series.x.push_back(static_cast<double>(row.result.seq_len));
        series.y.push_back(row.result.latency_s);
      }
      chart.series.push_back(std::move(series));
    }
  }
  chart.format_x = [](double tokens) { return topologies::format_token_count(static_cast<long long>(tokens + 0.5)); };
  chart.format_y = format_duration_label;  // "20 µs"
  return chart;
}

void write_text(const std::string& path, const std::string& text) { topologies::write_output_file(path, text); }

}  // namespace

void run_main_job() {
  const SweepSpec spec = default_comparison();
  std::cout
      << "treering: tree vs ring attention decoding, the default comparison (run 'treering --help' for more)\n"
      << "dgx-h100, 16 nodes (128 H100), paper-mha16 (16 heads x 128, bf16), one attention layer per decoded token;\n"
      << "model = the analytical model, simulated = the replay with shared links (sim/); vs ring = ring's latency / "
         "this\n\n";
  std::vector<std::size_t> all(sweep_cases(spec).size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto progress = [](std::size_t done, std::size_t total) {
    std::cerr << "\rcomputing " << done << '/' << total << " cases" << (done == total ? "\n" : "") << std::flush;
  };
  const std::vector<DecodeRow> rows =
      run_sweep(spec, all, jobs, progress_shown() ? progress : std::function<void(std::size_t, std::size_t)>{});
  print_sweep_table(std::cout, rows);
  std::filesystem::create_directories(kOutputDir);
  std::vector<std::string> lines;
  for (const DecodeRow& row : rows) lines.push_back(format_row(row, "csv", spec));
  const std::string csv = std::string(kOutputDir) + "/default-comparison.csv";
  const std::string png = std::string(kOutputDir) + "/latency.png";
  const std::string svg = std::string(kOutputDir) + "/latency.svg";
  write_text(csv, join_rows(lines, "csv", spec));
  const ChartLayout figure = lay_out_chart(latency_chart(rows));
  write_png(figure, png);
  write_svg(figure, svg);
  std::cout << "\nwrote " << csv << " (" << rows.size() << " rows), " << png << " and " << svg << '\n';
}

}  // namespace treering::cli
