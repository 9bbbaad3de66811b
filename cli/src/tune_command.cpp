// treering tune: the fastest combine strategy for a cluster, workload and context length (model::tune), with
// its gain over the paper's tree and ring, the best few confirmed in the simulator, and where the two engines
// rank them differently. '~' marks the strategies whose latency band meets the best one's (model/uncertainty.hpp):
// with both errors at 10 %, a strategy up to 1.1 / 0.9 = 1.22x the best's latency (best 100 us [90.9, 111.1],
// 120 us [109.1, 133.3]) cannot be told from it.
#include <iostream>

#include "replay_progress.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/tune.hpp"
#include "treering/analysis/csv.hpp"
#include "table.hpp"
#include "treering/model/tune.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

struct TuneArgs : DecodeArgs {
  int top = 10;     // rows shown
  int confirm = 5;  // the best this many replayed in the simulator (plus the paper's tree and ring)
};

std::string times(double ratio) { return format_ratio(ratio); }

// One line per distinct strategy; simulated_latency_s empty where not replayed, latency_s_high "inf" when unbounded.
void print_tune_csv(std::ostream& out, const TuneReport& r) {
  out << "rank,strategy,equivalents,algo,latency_s,latency_s_low,latency_s_high,within_best_band,simulated_latency_s\n";
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
    out << record.line();
  }
}

void print_ranking(std::ostream& out, const TuneArgs& args, const TuneReport& r) {
  Table table({"rank", "strategy", "same", "model", "~best", "simulated", "vs tree", "vs ring"});
  for (size_t i = 0; i < r.shown.size() && static_cast<int>(i) < args.top; ++i) {
    const double s = r.shown[i].first->result.latency_s;
    table.add_row({std::to_string(i + 1), r.shown[i].first->strategy.describe(),
                   r.shown[i].second ? "+" + std::to_string(r.shown[i].second) : "", topologies::format_duration(s),
                   i > 0 && r.band(i).within_best_band ? "~" : "",
                   i < r.confirmed.size() ? topologies::format_duration(r.confirmed[i].simulated_s) : "-",
                   times(r.tree->result.latency_s / s), times(r.ring->result.latency_s / s)});
  }
  table.print(out);
  const model::TunedStrategy& best = r.tuned.front();
  out << "\nbest: " << best.strategy.describe() << ", " << topologies::format_duration(best.result.latency_s)
      << " per layer: " << times(r.tree->result.latency_s / best.result.latency_s) << " faster than the paper's tree ("
      << topologies::format_duration(r.tree->result.latency_s) << "), "
      << times(r.ring->result.latency_s / best.result.latency_s) << " faster than ring ("
      << topologies::format_duration(r.ring->result.latency_s) << ")\n";
  const size_t close = r.others_within_best();
  if (close > 0) {
    out << "~: " << close << " strateg" << (close == 1 ? "y" : "ies") << " within the best's band ("
        << r.errors_legend() << "): the model cannot tell " << (close == 1 ? "it" : "them") << " from the best\n";
  } else {
    out << "no other strategy is within the best's band (" << r.errors_legend() << ")\n";
  }
  const auto& c = r.confirmed;
  size_t sim_best = 0;
  for (size_t i = 1; i < c.size(); ++i) sim_best = c[i].simulated_s < c[sim_best].simulated_s ? i : sim_best;
  if (r.swaps == 0) {
    out << "the simulator ranks the best " << c.size() << " in the same order\n";
  } else {
    out << "the simulator orders " << r.swaps << " pair(s) of the best " << c.size() << " differently; it ranks "
        << c[sim_best].tuned->strategy.describe() << " first (" << topologies::format_duration(c[sim_best].simulated_s)
        << ")\n";
  }
}

// tune's strategies: a heading, the ranking and what it says (table), one line per strategy (csv), or tune_json.
class TuneStrategiesReport : public Report {
 public:
  TuneStrategiesReport(const TuneReport& report, const TuneArgs& args, const topologies::Topology& topology,
                       const model::Workload& workload, long long seq_len)
      : report_(report), args_(args), topology_(topology), workload_(workload), seq_len_(seq_len) {}
  void print_table(std::ostream& out) const override {
    out << "tune: " << topology_.spec().name << ", " << report_.tree->result.gpus << " GPUs, " << workload_.name
        << " (batch " << workload_.batch << "), " << topologies::format_token_count(seq_len_)
        << " tokens: " << report_.tuned.size() << " strategies timed by the model (" << report_.shown.size()
        << " distinct; 'same': equivalents folded in)\n\n";
    print_ranking(out, args_, report_);
  }
  void print_csv(std::ostream& out) const override { print_tune_csv(out, report_); }
  nlohmann::ordered_json json() const override { return tune_json(report_); }

 private:
  const TuneReport& report_;
  const TuneArgs& args_;
  const topologies::Topology& topology_;
  const model::Workload& workload_;
  long long seq_len_;
};

void run(const TuneArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  const model::Workload workload = load_workload(args);
  const std::vector<long long> lengths = topologies::parse_token_counts(args.seq_len);
  if (lengths.size() != 1) throw topologies::InputError("--seq-len takes one length here");
  TuneRequest request{workload, lengths[0], args.gpus, plan_options(args), args.confirm, {}};
  if (progress_shown())
    request.on_simulating = [](const std::string& strategy) { std::cerr << "simulating " << strategy << "...\n"; };
  const TuneReport report = tune_report(topology, request);
  make_reporter(args.format, std::cout)->report(TuneStrategiesReport(report, args, topology, workload, lengths[0]));
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "tune",
      "Search combine strategies (algorithm, collective algorithm, tree fan-ins, leaders) for the fastest, "
      "and say which lie within the best one's band");
  auto args = std::make_shared<TuneArgs>();
  add_decode_options(*command, *args, "", {OutputFormat::table, OutputFormat::csv, OutputFormat::json});
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
