// treering crossover: where one algorithm beats another over context length x GPU count, and by how much, as
// a table (and the length from which it wins) or as tidy data for a heat map. A cell whose two latencies lie
// within each other's band (model/uncertainty.hpp) is one where the model cannot say which wins: with both
// errors at 10 %, 100 us [90.9, 111.1] and 120 us [109.1, 133.3] are such a pair (any ratio up to 1.1 / 0.9 = 1.22).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "replay_progress.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "crossover_tp.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/sweep.hpp"
#include "treering/analysis/crossover.hpp"
#include "treering/analysis/csv.hpp"
#include "table.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

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
  std::string format = "table";
  std::string impl = "efficient";
  int jobs = 1;
  std::string vs;  // "tp": context parallelism against plain TP (crossover_tp.hpp)
};

struct Cell {
  int gpus = 0;
  long long seq_len = 0;
  double first_s = 0, second_s = 0;  // the two algorithms' latencies
  model::Band first_band, second_band;
  double speedup() const { return second_s / first_s; }  // > 1: the first wins
  // Within each other's band: the model cannot say which wins.
  bool uncertain() const { return model::bands_overlap(first_band, second_band); }
};

nlohmann::ordered_json bound_json(double seconds) {
  return std::isfinite(seconds) ? nlohmann::ordered_json(seconds) : nlohmann::ordered_json();
}

std::string ratio_text(double ratio) { return format_ratio(ratio); }

// The shortest length from which `first` wins at every longer length, per GPU count; `surely`: also outside the
// other's band.
std::string wins_from(const std::vector<Cell>& cells, int gpus, bool surely) {
  std::vector<LengthOutcome> by_length;
  for (const Cell& c : cells) {
    if (c.gpus != gpus) continue;
    by_length.push_back({c.seq_len, c.speedup() > 1 && !(surely && c.uncertain()) ? Outcome::wins : Outcome::loses});
  }
  const std::optional<long long> from = analysis::wins_from(by_length);
  return from ? topologies::format_token_count(*from) : "never";
}

// The lengths at which the two lie within each other's band, per GPU count, as runs of consecutive lengths:
// "640k-5.12M", "80k, 320k-640k" or "none".
std::string uncertain_lengths(const std::vector<Cell>& cells, int gpus) {
  std::string text;
  const Cell* run_start = nullptr;
  const Cell* previous = nullptr;
  auto close_run = [&] {
    if (!run_start) return;
    text += (text.empty() ? "" : ", ") + topologies::format_token_count(run_start->seq_len);
    if (previous != run_start) text += "-" + topologies::format_token_count(previous->seq_len);
    run_start = nullptr;
  };
  for (const Cell& c : cells) {
    if (c.gpus != gpus) continue;
    if (!c.uncertain())
      close_run();
    else if (!run_start)
      run_start = &c;
    previous = &c;
  }
  close_run();
  return text.empty() ? "none" : text;
}

void print_table(const CrossoverArgs& args, const std::vector<Cell>& cells, const std::vector<int>& gpus_list,
                 const std::vector<long long>& lengths, const std::string& bands) {
  const std::string& a = args.algorithms[0];
  const std::string& b = args.algorithms[1];
  std::cout << a << " vs " << b << " on " << args.cluster << ", " << args.workload << " (" << args.engine
            << "): latency of " << b << " / latency of " << a << "; '" << b << " 1.5x' where " << b << " wins\n\n";
  std::vector<std::string> header{"tokens \\ GPUs"};
  for (int gpus : gpus_list) header.push_back(std::to_string(gpus));
  Table table(header);
  // "1.56x ~" and "1.60x  ": the ratios stay aligned when some cells are marked.
  const bool any_uncertain = std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.uncertain(); });
  for (long long seq_len : lengths) {
    std::vector<std::string> row{topologies::format_token_count(seq_len)};
    for (int gpus : gpus_list) {
      for (const Cell& c : cells) {
        if (c.gpus != gpus || c.seq_len != seq_len) continue;
        const std::string ratio = c.speedup() >= 1 ? ratio_text(c.speedup()) : b + " " + ratio_text(1 / c.speedup());
        row.push_back(ratio + (c.uncertain() ? " ~" : any_uncertain ? "  " : ""));
      }
    }
    table.add_row(row);
  }
  std::vector<std::string> from{a + " wins from"}, uncertain{"uncertain at"}, surely{"outside the bands from"};
  for (int gpus : gpus_list) {
    from.push_back(wins_from(cells, gpus, false));
    uncertain.push_back(uncertain_lengths(cells, gpus));
    surely.push_back(wins_from(cells, gpus, true));
  }
  table.add_row(from);
  table.add_row(uncertain);
  table.add_row(surely);
  table.print(std::cout);
  std::cout << "~: within each other's band (" << bands << "): the model cannot say which wins\n";
}

void print_data(const CrossoverArgs& args, const std::vector<Cell>& cells) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  if (args.format == "csv") {
    std::cout << "gpus,seq_len,first,second,first_latency_s,second_latency_s,speedup,winner,first_latency_s_low,first_"
                 "latency_s_high,"
                 "second_latency_s_low,second_latency_s_high,within_band\n";
  }
  for (const Cell& c : cells) {
    const std::string& winner = c.speedup() >= 1 ? args.algorithms[0] : args.algorithms[1];
    if (args.format == "csv") {
      CsvRecord record;
      record.integer(c.gpus).integer(c.seq_len).text(args.algorithms[0]).text(args.algorithms[1]).number(c.first_s);
      record.number(c.second_s).number(c.speedup()).text(winner).number(c.first_band.low_s).number(c.first_band.high_s);
      record.number(c.second_band.low_s).number(c.second_band.high_s).text(c.uncertain() ? "true" : "false");
      std::cout << record.line();
      continue;
    }
    rows.push_back({{"gpus", c.gpus},
                    {"seq_len", c.seq_len},
                    {"first", args.algorithms[0]},
                    {"second", args.algorithms[1]},
                    {"first_latency_s", c.first_s},
                    {"second_latency_s", c.second_s},
                    {"speedup", c.speedup()},
                    {"winner", winner},
                    {"first_latency_s_low", c.first_band.low_s},
                    {"first_latency_s_high", bound_json(c.first_band.high_s)},
                    {"second_latency_s_low", c.second_band.low_s},
                    {"second_latency_s_high", bound_json(c.second_band.high_s)},
                    {"within_band", c.uncertain()}});
  }
  if (args.format == "json") std::cout << rows.dump(2) << '\n';
}

void run_vs_tp(const CrossoverArgs& args, const CLI::App& command) {
  CpVsTpRequest request{
      args.cluster, args.nodes, {},         args.workload, args.batches, topologies::parse_token_counts(args.seq_len),
      {},           args.impl,  args.format};
  for (const std::string& text : args.settings) request.settings.push_back(topologies::parse_setting(text));
  if (command.count("--algo") > 0) request.combines = args.algorithms;  // the combines to try (default: all)
  if (args.engine != "model")
    throw topologies::InputError("--vs tp runs the model only (treering plan --confirm replays the best)");
  print_cp_vs_tp(request);
}

void run(const CrossoverArgs& args, const CLI::App& command) {
  if (args.vs == "tp") return run_vs_tp(args, command);
  if (args.batches.size() > 1) throw topologies::InputError("--batch takes one value here (several with --vs tp)");
  if (args.algorithms.size() != 2 || args.algorithms[0] == args.algorithms[1]) {
    throw topologies::InputError("--algo takes two different algorithms, e.g. tree,ring");
  }
  SweepSpec spec;
  spec.cluster = args.cluster;
  spec.nodes = args.nodes;
  spec.workloads = {args.workload};
  if (!args.batches.empty()) spec.batches = args.batches;
  spec.seq_lens = topologies::parse_token_counts(args.seq_len);
  for (const std::string& name : args.algorithms) spec.algorithms.push_back(model::parse_decode_algorithm(name));
  spec.engines = {validate::parse_engine(args.engine)};
  spec.impl = args.impl;
  for (const std::string& text : args.settings) spec.settings.push_back(topologies::parse_setting(text));
  std::vector<std::size_t> all(sweep_cases(spec).size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<DecodeRow> rows = run_sweep(spec, all, args.jobs);  // per (nodes, length): first, second
  std::vector<Cell> cells;
  std::vector<int> gpus_list;
  for (std::size_t i = 0; i + 1 < rows.size(); i += 2) {
    cells.push_back({rows[i].result.gpus, rows[i].result.seq_len, rows[i].result.latency_s,
                     rows[i + 1].result.latency_s, rows[i].latency_band, rows[i + 1].latency_band});
    if (gpus_list.empty() || gpus_list.back() != cells.back().gpus) gpus_list.push_back(cells.back().gpus);
  }
  std::vector<model::RelativeErrors> errors;
  for (const DecodeRow& row : rows) errors.push_back(row.errors);
  if (args.format == "table") return print_table(args, cells, gpus_list, spec.seq_lens, errors_legend(errors));
  print_data(args, cells);
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
  add_format_option(*command, args->format, {"table", "csv", "json"});
  add_progress_flag(*command);
  command->callback([args, command] { run(*args, *command); });
}

}  // namespace treering::cli
