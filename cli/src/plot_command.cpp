// treering plot FILE.csv|json --x COL --y COL [--series COL] [--log-x] [--log-y] -o fig.png|svg: any rows predict,
// simulate or sweep wrote, drawn by the main job's chart code (plot_chart.hpp).
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "plot_chart.hpp"

namespace treering::cli {

void add_plot_command(CLI::App& app) {
  auto* command = app.add_subcommand("plot",
                                     "Draw the rows a command wrote (predict, simulate, sweep ... -o FILE.csv|json) "
                                     "as a line chart, PNG or SVG");
  auto spec = std::make_shared<PlotSpec>();
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  command->add_option("file", *input, "FILE.csv or FILE.json, as a command wrote it with --format csv|json -o")
      ->required();
  command->add_option("--x", spec->x, "The column along x (a numeric one: seq_len, nodes, gpus, batch, tp, ...)")
      ->required();
  command->add_option("--y", spec->y, "The column along y (a numeric one: latency_s, step_s, tokens_per_s, ...)")
      ->required();
  command->add_option("--series", spec->series, "Columns whose values make one line each, e.g. algo or algo,engine")
      ->delimiter(',');
  command->add_flag("--log-x", spec->log_x, "A logarithmic x axis (rows at or below 0 left out)");
  command->add_flag("--log-y", spec->log_y, "A logarithmic y axis (rows at or below 0 left out)");
  command->add_option("--title", spec->title, "The chart's title (default: 'Y against X, by SERIES')");
  command->add_option("-o,--output", *output, "The figure: FILE.png or FILE.svg")->required();
  command->footer(
      "Example:\n"
      "  treering sweep --cluster dgx-h100 --nodes 2,4,8,16 --tp 8 --scope step --workload llama3.1-8b \\\n"
      "      --seq-len 128k:1M:x2 --algo tree,ring -o sweep.csv\n"
      "  treering plot sweep.csv --x seq_len --y step_s --series algo,gpus --log-x --log-y -o step.png\n"
      "Columns: those of the file (a JSON file's nested ones also as breakdown.compute_s, and as the CSV names them).");
  command->callback([spec, input, output] {
    plot_file(*input, *spec, *output);
    std::cerr << "wrote " << *output << '\n';
  });
}

}  // namespace treering::cli
