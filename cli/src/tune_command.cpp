// treering tune: the fastest combine strategy for a cluster, workload and context length (model::tune), with
// its gain over the paper's tree and ring, the best few confirmed in the simulator, and where the two engines
// rank them differently. '~' marks the strategies whose latency band meets the best one's (model/uncertainty.hpp):
// with both errors at 10 %, a strategy up to 1.1 / 0.9 = 1.22x the best's latency (best 100 us [90.9, 111.1],
// 120 us [109.1, 133.3]) cannot be told from it.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "replay_progress.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/tune.hpp"
#include "treering/analysis/csv.hpp"
#include "table.hpp"
#include "treering/model/tune.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

struct TuneArgs : DecodeArgs {
  int top = 10;     // rows shown
  int confirm = 5;  // the best this many replayed in the simulator (plus the paper's tree and ring)
};

struct Confirmed {
  const model::TunedStrategy* tuned;
  double simulated_s;
};

std::string times(double ratio) { return format_ratio(ratio); }

double simulate(const topologies::Topology& topology, const std::vector<int>& gpus, const model::Strategy& s,
                const model::Workload& workload, long long seq_len) {
  const model::DecodeModel decode(topology, s.leader == 0 ? gpus : model::rotated_gpus(topology, gpus, s.leader));
  return sim::replay_plan(decode, decode.plan(s.algorithm, workload, seq_len, s.options)).latency_s;
}

// Pairs of confirmed strategies the two engines order differently.
int discordant_pairs(const std::vector<Confirmed>& confirmed) {
  int count = 0;
  for (size_t i = 0; i < confirmed.size(); ++i) {
    for (size_t j = i + 1; j < confirmed.size(); ++j) {
      const double model_order = confirmed[i].tuned->result.latency_s - confirmed[j].tuned->result.latency_s;
      const double sim_order = confirmed[i].simulated_s - confirmed[j].simulated_s;
      count += model_order * sim_order < 0 ? 1 : 0;
    }
  }
  return count;
}

// What every format reports: the distinct strategies with their bands, the paper's tree and ring, the best few
// replayed in the simulator. `shown`, `tree`, `ring` and `confirmed` point into `tuned` (moving keeps them valid).
struct TuneReport {
  std::vector<model::TunedStrategy> tuned;
  std::vector<model::StrategyBand> bands;                          // per tuned strategy
  std::vector<std::pair<const model::TunedStrategy*, int>> shown;  // distinct, with their equivalents
  const model::TunedStrategy* tree = nullptr;
  const model::TunedStrategy* ring = nullptr;
  std::vector<Confirmed> confirmed;
  int swaps = 0;  // pairs of the confirmed the simulator orders differently

  const model::StrategyBand& band(size_t shown_index) const { return bands[shown[shown_index].first - tuned.data()]; }
  // Distinct strategies other than the best within its band: the model cannot tell them from the best.
  size_t others_within_best() const {
    size_t count = 0;
    for (size_t i = 1; i < shown.size(); ++i) count += band(i).within_best_band ? 1 : 0;
    return count;
  }
  std::string errors_legend() const {
    std::vector<model::RelativeErrors> errors;
    for (const model::StrategyBand& b : bands) errors.push_back(b.errors);
    return cli::errors_legend(errors);
  }
};

TuneReport tune_report(const TuneArgs& args, const topologies::Topology& topology, const model::Workload& workload,
                       long long seq_len) {
  TuneReport report;
  const model::PlanOptions options = plan_options(args);
  report.tuned = model::tune(topology, workload, seq_len, args.gpus, options);
  report.bands = model::strategy_bands(topology, report.tuned, *options.impl);
  report.shown = fold_equivalents(report.tuned);
  for (const auto& t : report.tuned) {
    const bool plain = !t.strategy.options.collective_algorithm && t.strategy.leader == 0;
    if (plain && t.strategy.algorithm == model::DecodeAlgorithm::tree && !report.tree) report.tree = &t;
    if (plain && t.strategy.algorithm == model::DecodeAlgorithm::ring && !report.ring) report.ring = &t;
  }
  for (size_t i = 0; i < report.shown.size() && static_cast<int>(i) < args.confirm; ++i) {
    const model::Strategy& strategy = report.shown[i].first->strategy;
    if (progress_shown()) std::cerr << "simulating " << strategy.describe() << "...\n";
    report.confirmed.push_back({report.shown[i].first, simulate(topology, args.gpus, strategy, workload, seq_len)});
  }
  report.swaps = discordant_pairs(report.confirmed);
  return report;
}

// JSON has no infinity: an unbounded side is null.
nlohmann::ordered_json bound_json(double seconds) {
  return std::isfinite(seconds) ? nlohmann::ordered_json(seconds) : nlohmann::ordered_json();
}

void print_json(const TuneReport& r) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.shown.size(); ++i) {
    const model::TunedStrategy& t = *r.shown[i].first;
    nlohmann::ordered_json row = {{"rank", i + 1},
                                  {"strategy", t.strategy.describe()},
                                  {"equivalents", r.shown[i].second},
                                  {"algo", model::to_string(t.strategy.algorithm)},
                                  {"latency_s", t.result.latency_s},
                                  {"latency_s_low", r.band(i).band.low_s},
                                  {"latency_s_high", bound_json(r.band(i).band.high_s)},
                                  {"within_best_band", r.band(i).within_best_band}};
    if (i < r.confirmed.size()) row["simulated_latency_s"] = r.confirmed[i].simulated_s;
    rows.push_back(row);
  }
  const model::TunedStrategy& best = r.tuned.front();
  nlohmann::ordered_json json = {
      {"best", best.strategy.describe()},           {"best_latency_s", best.result.latency_s},
      {"tree_latency_s", r.tree->result.latency_s}, {"ring_latency_s", r.ring->result.latency_s},
      {"strategies_tried", r.tuned.size()},         {"strategies_within_best_band", r.others_within_best()},
      {"engines_disagree_pairs", r.swaps},          {"strategies", rows}};
  std::cout << json.dump(2) << '\n';
}

// One line per distinct strategy; simulated_latency_s empty where not replayed, latency_s_high "inf" when unbounded.
void print_csv(const TuneReport& r) {
  std::cout
      << "rank,strategy,equivalents,algo,latency_s,latency_s_low,latency_s_high,within_best_band,simulated_latency_s\n";
  for (size_t i = 0; i < r.shown.size(); ++i) {
    const model::TunedStrategy& t = *r.shown[i].first;
    CsvRecord record;
    record.integer(static_cast<long long>(i + 1)).text(t.strategy.describe()).integer(r.shown[i].second);
    record.text(model::to_string(t.strategy.algorithm)).number(t.result.latency_s).number(r.band(i).band.low_s);
    record.number(r.band(i).band.high_s).text(r.band(i).within_best_band ? "true" : "false");
    if (i < r.confirmed.size()) {
      record.number(r.confirmed[i].simulated_s);
    } else {
      record.empty();
    }
    std::cout << record.line();
  }
}

void print_table(const TuneArgs& args, const TuneReport& r) {
  Table table({"rank", "strategy", "same", "model", "~best", "simulated", "vs tree", "vs ring"});
  for (size_t i = 0; i < r.shown.size() && static_cast<int>(i) < args.top; ++i) {
    const double s = r.shown[i].first->result.latency_s;
    table.add_row({std::to_string(i + 1), r.shown[i].first->strategy.describe(),
                   r.shown[i].second ? "+" + std::to_string(r.shown[i].second) : "", topologies::format_duration(s),
                   i > 0 && r.band(i).within_best_band ? "~" : "",
                   i < r.confirmed.size() ? topologies::format_duration(r.confirmed[i].simulated_s) : "-",
                   times(r.tree->result.latency_s / s), times(r.ring->result.latency_s / s)});
  }
  table.print(std::cout);
  const model::TunedStrategy& best = r.tuned.front();
  std::cout << "\nbest: " << best.strategy.describe() << ", " << topologies::format_duration(best.result.latency_s)
            << " per layer: " << times(r.tree->result.latency_s / best.result.latency_s)
            << " faster than the paper's tree (" << topologies::format_duration(r.tree->result.latency_s) << "), "
            << times(r.ring->result.latency_s / best.result.latency_s) << " faster than ring ("
            << topologies::format_duration(r.ring->result.latency_s) << ")\n";
  const size_t close = r.others_within_best();
  if (close > 0) {
    std::cout << "~: " << close << " strateg" << (close == 1 ? "y" : "ies") << " within the best's band ("
              << r.errors_legend() << "): the model cannot tell " << (close == 1 ? "it" : "them") << " from the best\n";
  } else {
    std::cout << "no other strategy is within the best's band (" << r.errors_legend() << ")\n";
  }
  const auto& c = r.confirmed;
  size_t sim_best = 0;
  for (size_t i = 1; i < c.size(); ++i) sim_best = c[i].simulated_s < c[sim_best].simulated_s ? i : sim_best;
  if (r.swaps == 0) {
    std::cout << "the simulator ranks the best " << c.size() << " in the same order\n";
  } else {
    std::cout << "the simulator orders " << r.swaps << " pair(s) of the best " << c.size() << " differently; it ranks "
              << c[sim_best].tuned->strategy.describe() << " first ("
              << topologies::format_duration(c[sim_best].simulated_s) << ")\n";
  }
}

void run(const TuneArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  const model::Workload workload = load_workload(args);
  const std::vector<long long> lengths = topologies::parse_token_counts(args.seq_len);
  if (lengths.size() != 1) throw topologies::InputError("--seq-len takes one length here");
  const TuneReport report = tune_report(args, topology, workload, lengths[0]);
  if (args.format == "json") return print_json(report);
  if (args.format == "csv") return print_csv(report);
  std::cout << "tune: " << topology.spec().name << ", " << report.tree->result.gpus << " GPUs, " << workload.name
            << " (batch " << workload.batch << "), " << topologies::format_token_count(lengths[0])
            << " tokens: " << report.tuned.size() << " strategies timed by the model (" << report.shown.size()
            << " distinct; 'same': equivalents folded in)\n\n";
  print_table(args, report);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "tune",
      "Search combine strategies (algorithm, collective algorithm, tree fan-ins, leaders) for the fastest, "
      "and say which lie within the best one's band");
  auto args = std::make_shared<TuneArgs>();
  add_decode_options(*command, *args, "", {"table", "csv", "json"});
  drop_options(*command,
               {"--algo", "--tokens", "--prefill"});  // tune tries every combine and ranks their per-token latency
  command->get_option("--seq-len")
      ->description(std::string("One context length: 80k, 5.12M; ") + topologies::kTokenCountRule);
  command->footer(
      "Table: '~' in the ~best column marks a strategy whose latency band meets the best one's: the model cannot "
      "tell it from the best. CSV/JSON: latency_s_low/high (the band) and within_best_band for every strategy.");
  command->add_option("--top", args->top, "Strategies shown")->check(CLI::Range(1, 100000))->capture_default_str();
  command->add_option("--confirm", args->confirm, "The best this many replayed in the simulator")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_progress_flag(*command);
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
