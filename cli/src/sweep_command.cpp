// treering sweep: every combination of nodes x workload x batch x length x algorithm x engine on one cluster,
// one tidy row per case (predict's CSV/JSON schema), worker processes with --jobs, ranks under mpirun/srun.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <numeric>

#include "replay_progress.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "layout_args.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/analysis/sweep.hpp"
#include "treering/analysis/sweep_ranks.hpp"
#include "sweep_table.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

struct SweepArgs {
  std::string cluster;
  std::vector<int> nodes;
  std::vector<std::string> workloads{"paper-mha16"};
  std::vector<int> batches;
  std::string seq_len;
  std::vector<std::string> algorithms{"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"};
  std::vector<std::string> engines{"model"};
  std::vector<std::string> settings;
  std::string split = "equal";
  std::string impl = "efficient";
  std::string output;
  std::string format;  // default: from -o's extension, else table
  int jobs = 1;
  RendezvousOptions rendezvous;
  LayoutArgs layout;
};

OutputFormat output_format(const SweepArgs& args) {
  if (args.format == "csv" || (args.format.empty() && args.output.ends_with(".csv"))) return OutputFormat::csv;
  if (args.format == "json" || (args.format.empty() && args.output.ends_with(".json"))) return OutputFormat::json;
  if (!args.format.empty() || args.output.empty()) return OutputFormat::table;
  throw topologies::InputError("-o " + args.output + ": name a .csv or .json file, or give --format csv|json");
}

// "[=======>            ] 12/140 cases" on a terminal, rewritten in place.
void show_progress(std::size_t done, std::size_t total) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / std::max<std::size_t>(total, 1));
  std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '=')
            << std::string(static_cast<size_t>(kWidth - filled), ' ') << "] " << done << '/' << total << " cases"
            << (done == total ? "\n" : "") << std::flush;
}

// This rank's cases (every size()-th, from its own index: long and short cases alternate between ranks), run,
// formatted; rank 0 joins everyone's in the case order.
void run_sweep_on_ranks(const SweepArgs& args, const SweepSpec& spec, OutputFormat format, const SweepRanks& ranks) {
  const std::size_t total = sweep_cases(spec).size();
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(ranks.rank()); i < total; i += static_cast<std::size_t>(ranks.size()))
    mine.push_back(i);
  const bool terminal = ranks.rank() == 0 && progress_shown();
  const std::vector<DecodeRow> rows =
      run_sweep(spec, mine, args.jobs, terminal ? show_progress : std::function<void(std::size_t, std::size_t)>{});
  if (format == OutputFormat::table) {
    return print_sweep_table(std::cout, rows);
  }
  std::vector<std::string> formatted;
  for (const DecodeRow& row : rows) formatted.push_back(format_row(row, to_string(format), spec));
  const std::vector<std::vector<std::string>> pieces = ranks.gather(formatted);
  if (ranks.rank() != 0) return;
  std::vector<std::string> ordered(total);
  for (std::size_t i = 0; i < total; ++i) ordered[i] = pieces.at(i % pieces.size()).at(i / pieces.size());
  const std::string text = join_rows(ordered, to_string(format), spec);
  if (args.output.empty()) {
    std::cout << text;
    return;
  }
  topologies::write_output_file(args.output, text);
  std::cerr << "wrote " << total << " rows to " << args.output
            << (ranks.size() > 1 ? " (" + std::to_string(ranks.size()) + " ranks)" : "") << '\n';
}

// The sweep the options ask for (names parsed: an unknown one fails before any case runs).
SweepSpec spec_of(const SweepArgs& args) {
  std::vector<model::DecodeAlgorithm> algorithms;
  for (const std::string& name : args.algorithms) algorithms.push_back(model::parse_decode_algorithm(name));
  std::vector<validate::Engine> engines;
  for (const std::string& engine : args.engines) engines.push_back(validate::parse_engine(engine));
  std::vector<topologies::Setting> settings;
  for (const std::string& text : args.settings) settings.push_back(topologies::parse_setting(text));
  return {.cluster = args.cluster,
          .nodes = args.nodes,
          .workloads = args.workloads,
          .batches = args.batches,
          .seq_lens = topologies::parse_token_counts(args.seq_len),
          .algorithms = algorithms,
          .engines = engines,
          .settings = settings,
          .split = model::parse_token_split(args.split),
          .impl = args.impl,
          .layout = args.layout};
}

void run(const SweepArgs& args) {
  const SweepSpec spec = spec_of(args);
  const OutputFormat format = output_format(args);
  sweep_cases(spec);  // bad axes fail before any case runs
  const SweepRanks ranks(args.output, args.rendezvous);
  try {
    run_sweep_on_ranks(args, spec, format, ranks);
  } catch (const std::exception& error) {
    ranks.report_failure(error.what());
    throw;
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "sweep", "Every combination of nodes, workloads, batches, lengths, algorithms and engines: one row per case");
  auto args = std::make_shared<SweepArgs>();
  command->add_option("--cluster", args->cluster, "A preset name (treering topo list) or a YAML file")->required();
  command->add_option("--nodes", args->nodes, "Node counts, e.g. 1,2,4,8,16 (default: the cluster file's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 30));
  add_set_option(*command, args->settings);
  command->add_option("--workload", args->workloads, "Workload presets or YAML files, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--batch", args->batches, "Batch sizes, e.g. 1,8 (default: each workload's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 30));
  command
      ->add_option(
          "--seq-len", args->seq_len,
          std::string("Context lengths: 80k, lists 80k,1M and ranges 80k:5.12M:x2; ") + topologies::kTokenCountRule)
      ->required();
  command->add_option("--algo", args->algorithms, "Algorithms: " + model::decode_algorithm_names(true))
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--engine", args->engines, "model, sim or both (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("-o,--output", args->output, "Write the rows to FILE.csv or FILE.json (rank 0 under mpirun)");
  command->add_option("--format", args->format, "table, csv or json (default: from -o's extension, else table)")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  command->add_option("--split", args->split, "KV cache per GPU: equal, or by-speed (mixed GPUs)")
      ->check(CLI::IsMember({"equal", "by-speed"}))
      ->capture_default_str();
  add_impl_option(*command, args->impl);
  add_layout_options(*command, args->layout);
  command->add_option("--jobs", args->jobs, "Worker processes (per rank under mpirun/srun)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command->add_option("--launch-id", args->rendezvous.launch_id,
                      "Under mpirun/srun: the id every rank's part files carry (default: the launcher's job id)");
  command
      ->add_option("--rank-timeout", args->rendezvous.timeout_s,
                   "Under mpirun/srun: seconds rank 0 waits for the others")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  add_progress_flag(*command);
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
