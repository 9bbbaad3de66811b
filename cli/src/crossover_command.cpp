// treering crossover: where one algorithm beats another over context length x GPU count, and by how much, as
// a table (and the length from which it wins) or as tidy data for a heat map. The arguments and the printing; the
// cells and the rows under the table are computed by analysis::run_crossover (crossover.hpp), --vs tp's by
// crossover_tp.hpp. A cell whose two latencies lie within each other's band (model/uncertainty.hpp) is one where
// the model cannot say which wins: with both errors at 10 %, 100 us [90.9, 111.1] and 120 us [109.1, 133.3] are
// such a pair (any ratio up to 1.1 / 0.9 = 1.22).
#include <algorithm>
#include <iostream>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "crossover_tp.hpp"
#include "reporter.hpp"
#include "table.hpp"
#include "treering/analysis/crossover.hpp"
#include "treering/analysis/csv.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

struct CrossoverArgs {
  std::string cluster;
  std::vector<int> nodes{1, 2, 4, 8, 16};
  std::string workload = "paper-mha16";
  std::vector<int> batches;
  std::string seq_len = "80k:5.12M:x2";
  std::vector<std::string> algorithms{"tree", "ring"};
  std::string engine = "model";
  std::vector<std::string> settings;
  OutputFormat format = OutputFormat::table;
  std::string impl = "efficient";
  int jobs = 1;
  std::string vs;  // "tp": context parallelism against plain TP (crossover_tp.hpp)
};

std::string ratio_text(double ratio) { return format_ratio(ratio); }

std::string length_text(const std::optional<long long>& from) {
  return from ? topologies::format_token_count(*from) : "never";
}

// "640k-5.12M", "80k, 320k-640k" or "none".
std::string runs_text(const std::vector<LengthRun>& runs) {
  std::string text;
  for (const LengthRun& run : runs) {
    text += (text.empty() ? "" : ", ") + topologies::format_token_count(run.first);
    if (run.last != run.first) text += "-" + topologies::format_token_count(run.last);
  }
  return text.empty() ? "none" : text;
}

void print_cells(std::ostream& out, const CrossoverArgs& args, const CrossoverResult& result) {
  const std::string& a = result.first;
  const std::string& b = result.second;
  const std::vector<CrossoverCell>& cells = result.cells;
  out << a << " vs " << b << " on " << args.cluster << ", " << args.workload << " (" << args.engine << "): latency of "
      << b << " / latency of " << a << "; '" << b << " 1.5x' where " << b << " wins\n\n";
  std::vector<std::string> header{"tokens \\ GPUs"};
  for (int gpus : result.gpus) header.push_back(std::to_string(gpus));
  Table table(header);
  // "1.56x ~" and "1.60x  ": the ratios stay aligned when some cells are marked.
  const bool any_uncertain =
      std::any_of(cells.begin(), cells.end(), [](const CrossoverCell& c) { return c.uncertain(); });
  for (long long seq_len : result.seq_lens) {
    std::vector<std::string> row{topologies::format_token_count(seq_len)};
    for (int gpus : result.gpus) {
      for (const CrossoverCell& c : cells) {
        if (c.gpus != gpus || c.seq_len != seq_len) continue;
        const std::string ratio = c.speedup() >= 1 ? ratio_text(c.speedup()) : b + " " + ratio_text(1 / c.speedup());
        row.push_back(ratio + (c.uncertain() ? " ~" : any_uncertain ? "  " : ""));
      }
    }
    table.add_row(row);
  }
  std::vector<std::string> from{a + " wins from"}, uncertain{"uncertain at"}, surely{"outside the bands from"};
  for (const CrossoverSummary& summary : result.summaries) {
    from.push_back(length_text(summary.wins_from));
    uncertain.push_back(runs_text(summary.uncertain));
    surely.push_back(length_text(summary.surely_wins_from));
  }
  table.add_row(from);
  table.add_row(uncertain);
  table.add_row(surely);
  table.print(out);
  out << "~: within each other's band (" << errors_legend(result.errors) << "): the model cannot say which wins\n";
}

void print_cells_csv(std::ostream& out, const CrossoverResult& result) {
  out << "gpus,seq_len,first,second,first_latency_s,second_latency_s,speedup,winner,first_latency_s_low,first_"
         "latency_s_high,"
         "second_latency_s_low,second_latency_s_high,within_band\n";
  for (const CrossoverCell& c : result.cells) {
    const std::string& winner = c.speedup() >= 1 ? result.first : result.second;
    CsvRecord record;
    record.integer(c.gpus).integer(c.seq_len).text(result.first).text(result.second).number(c.first_s);
    record.number(c.second_s).number(c.speedup()).text(winner).number(c.first_band.low_s).number(c.first_band.high_s);
    record.number(c.second_band.low_s).number(c.second_band.high_s).text(c.uncertain() ? "true" : "false");
    out << record.line();
  }
}

// The cells: a table of ratios with the summary rows under it, one line per cell (csv), or crossover_json.
class CrossoverReport : public Report {
 public:
  CrossoverReport(const CrossoverResult& result, const CrossoverArgs& args) : result_(result), args_(args) {}
  void print_table(std::ostream& out) const override { print_cells(out, args_, result_); }
  void print_csv(std::ostream& out) const override { print_cells_csv(out, result_); }
  nlohmann::ordered_json json() const override { return crossover_json(result_); }

 private:
  const CrossoverResult& result_;
  const CrossoverArgs& args_;
};

CrossoverRequest request_of(const CrossoverArgs& args) {
  CrossoverRequest request;
  request.cluster = args.cluster;
  request.nodes = args.nodes;
  request.workload = args.workload;
  request.batches = args.batches;
  request.seq_lens = topologies::parse_token_counts(args.seq_len);
  request.algorithms = args.algorithms;
  request.engine = validate::parse_engine(args.engine);
  for (const std::string& text : args.settings) request.settings.push_back(topologies::parse_setting(text));
  request.impl = args.impl;
  request.jobs = args.jobs;
  return request;
}

void run(const CrossoverArgs& args, const CLI::App& command) {
  CrossoverRequest request = request_of(args);
  if (args.vs == "tp") {
    if (command.count("--algo") == 0) request.algorithms.clear();  // the combines to try (default: all)
    return print_cp_vs_tp(request, args.format);
  }
  const CrossoverResult result = run_crossover(request);
  make_reporter(args.format, std::cout)->report(CrossoverReport(result, args));
}

}  // namespace

void add_crossover_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("crossover",
                         "Where one algorithm beats another over context length x GPU count, by how much, and "
                         "where the two lie within each other's band (~: the model cannot say which wins)");
  command->footer(
      "Table: '~' marks a cell whose two latencies' bands overlap; the rows under it give the length from which the "
      "first "
      "wins, the lengths at which the choice is uncertain, and the length from which the first wins by more than the "
      "bands. CSV/JSON: both latencies' bands (first_/second_latency_s_low/high) and within_band.");
  auto args = std::make_shared<CrossoverArgs>();
  command->add_option("--cluster", args->cluster, "A preset name (treering topo list) or a YAML file")->required();
  command->add_option("--nodes", args->nodes, "Node counts")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 30))
      ->capture_default_str();
  add_set_option(*command, args->settings);
  command->add_option("--workload", args->workload, "A workload preset or YAML file")->capture_default_str();
  command
      ->add_option("--batch", args->batches,
                   "Sequences decoded together (default: the workload's; a list with --vs tp)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 30));
  command
      ->add_option("--seq-len", args->seq_len,
                   std::string("Context lengths: lists 80k,1M and ranges 80k:5.12M:x2; ") + topologies::kTokenCountRule)
      ->capture_default_str();
  command
      ->add_option("--algo", args->algorithms,
                   "The two algorithms compared, the first's speedup shown (--vs tp: the combines tried)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--engine", args->engine, "model or sim")
      ->check(CLI::IsMember({"model", "sim"}))
      ->capture_default_str();
  add_impl_option(*command, args->impl);
  command->add_option("--jobs", args->jobs, "Worker processes")->check(CLI::Range(1, 1024))->capture_default_str();
  command
      ->add_option("--vs", args->vs,
                   "tp: the best context-parallel layout and combine against plain tensor parallelism, by "
                   "context length and batch (time per output token)")
      ->check(CLI::IsMember({"tp"}));
  add_format_option(*command, args->format, {OutputFormat::table, OutputFormat::csv, OutputFormat::json});
  add_progress_flag(*command);
  command->callback([args, command] { run(*args, *command); });
}

}  // namespace treering::cli
