// treering plan: which layout (tp x cp) and combine gives the lowest time per output token for a model on a
// cluster at a context length and batch (model::plan_deployment), with memory headroom, the longest context
// each fits, '~' where a choice's band meets the best one's, and the best few confirmed by the simulator
// (every CP group's attention replayed, the step rebuilt around the slowest).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "replay_progress.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/plan_report.hpp"
#include "treering/analysis/moe_report.hpp"
#include "treering/analysis/csv.hpp"
#include "table.hpp"
#include "treering/model/planner.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using nlohmann::ordered_json;
namespace units = treering::topologies;

struct PlanArgs : PlanChoice {
  ClusterArgs cluster;
  std::string seq_len_text;  // --seq-len: one length (PlanChoice::seq_len once read)
  int top = 12;
  OutputFormat format = OutputFormat::table;
};

// "#1-#74 are a tie within the model's uncertainty (their bands meet the fastest's, #3, 25.81 ms)".
void print_tie(std::ostream& out, const model::DeploymentPlan& plan) {
  const auto tied = std::count_if(plan.ranked.begin(), plan.ranked.end(),
                                  [](const model::PlannedLayout& c) { return c.within_best_band; });
  const int fastest = fastest_rank(plan);
  const std::string best = "#" + std::to_string(fastest) + ", " +
                           units::format_duration(plan.ranked[static_cast<size_t>(fastest - 1)].step.step_s);
  if (tied == 1) {
    out << "#1 is the fastest, and no other choice's band meets its own\n";
  } else {
    out << "#1-#" << tied << " are a tie within the model's uncertainty (their bands meet the fastest's, " << best
        << "): ordered by their time across nodes, least first\n";
  }
}

void print_choices(std::ostream& out, const model::DeploymentPlan& plan, const PlanArgs& args,
                   const model::Workload& workload, long long seq_len, const topologies::Topology& topology,
                   const std::vector<std::optional<double>>& simulated, const model::RelativeErrors& errors) {
  const bool target = plan.tpot_target_s.has_value();
  out << workload.name;
  if (target) {
    out << ", the largest batch that meets " << units::format_duration(*plan.tpot_target_s) << " a token";
  } else {
    out << ", batch " << workload.batch;
  }
  out << ", " << seq_len << " tokens of context on " << topology.spec().name << " (" << topology.gpu_count()
      << " GPUs) — time per output token, analytical model\nimplementation: " << args.impl
      << "; band: " << errors_text(errors) << "; " << (target ? kThroughputRankingRule : kRankingRule)
      << "; ~: in that tie; x-node: the share of the time that is communication across "
      << "nodes, and its calls a step; x-node lat: its part at latency-bound sizes, where the model is least sure; "
         "simulated: a layer replayed (every CP group's combine and every TP group's all-reduces at once, links shared)"
      << (topology.spec().calibration ? "; *: outside what the calibration measured (listed below)" : "") << "\n"
      << calibration_line(topology) << "\n\n";
  Table table({"#", "layout", "combine", "batch", "per token", "band", "", "x-node", "calls", "x-node lat", "tokens/s",
               "tok/s/GPU", "attention", "memory/GPU", "headroom", "max context", "simulated", ""});
  std::vector<std::string> notes, reasons;
  for (size_t i = 0; i < plan.ranked.size() && static_cast<int>(i) < args.top; ++i) {
    const model::PlannedLayout& c = plan.ranked[i];
    char tokens[32], network[32], across[32], per_gpu[32];
    std::snprintf(tokens, sizeof tokens, "%.1f", c.step.tokens_per_s);
    std::snprintf(per_gpu, sizeof per_gpu, "%.1f", c.tokens_per_s_per_gpu);
    std::snprintf(network, sizeof network, "%.0f %%", 100 * c.network_latency_s / c.step.step_s);
    std::snprintf(across, sizeof across, "%.0f %%", 100 * c.cross_node.time_s / c.step.step_s);
    table.add_row(
        {std::to_string(i + 1), model::layout_name(c.layout), combine_name(c), std::to_string(c.batch),
         units::format_duration(c.step.step_s), format_band(c.band), c.within_best_band ? "~" : "",
         c.cross_node.calls > 0 ? across : "", c.cross_node.calls > 0 ? std::to_string(c.cross_node.calls) : "",
         c.network_latency_s > 0 ? network : "", tokens, per_gpu, units::format_duration(c.attention.slowest.latency_s),
         units::format_bytes(c.step.memory.total), units::format_bytes(c.step.memory.capacity - c.step.memory.total),
         std::to_string(c.step.memory.max_seq_len),
         i < simulated.size() && simulated[i] ? units::format_duration(*simulated[i]) : "",
         c.extrapolation.empty() ? "" : "*"});
    if (!c.extrapolation.empty()) notes.push_back("* #" + std::to_string(i + 1) + ": " + c.extrapolation);
    if (!c.why.empty())
      reasons.push_back("#" + std::to_string(i + 1) + " " + model::layout_name(c.layout) + " " + combine_name(c) + " " +
                        c.why);
  }
  table.print(out);
  if (!target) print_tie(out, plan);
  for (size_t i = 0; i < plan.ranked.size() && static_cast<int>(i) < args.top; ++i) {
    if (plan.ranked[i].step.experts) out << "#" << i + 1 << " " << expert_step_line(plan.ranked[i].step) << '\n';
  }
  for (const std::string& note : notes) out << note << '\n';
  if (!reasons.empty()) out << "why (memory, communication, compute against plain TP on as many GPUs):\n";
  for (const std::string& reason : reasons) out << "  " << reason << '\n';
  out << plan.ranked.size() << (target ? " choices meet the target" : " choices fit");
  if (static_cast<int>(plan.ranked.size()) > args.top) out << " (" << args.top << " shown: --top)";
  if (!plan.not_fitting.empty()) {
    const model::PlannedLayout& least = plan.not_fitting.front();
    out << "; " << plan.not_fitting.size() << " do not (the smallest need, " << model::layout_name(least.layout) << ", "
        << units::format_bytes(least.step.memory.total) << " per GPU of "
        << units::format_bytes(least.step.memory.capacity) << ")";
  }
  if (!plan.too_slow.empty()) {
    const model::PlannedLayout& quickest = plan.too_slow.front();
    out << "; " << plan.too_slow.size() << " miss it even at their smallest batch (the quickest, "
        << model::layout_name(quickest.layout) << ", " << units::format_duration(quickest.step.step_s) << ")";
  }
  out << '\n';
  for (const std::string& why : plan.skipped) out << "skipped " << why << '\n';
}

// One line per choice, the ranked ones first (rank 0: the ones that do not fit).
void print_choices_csv(std::ostream& out, const model::DeploymentPlan& plan,
                       const std::vector<std::optional<double>>& simulated) {
  out << "rank,tp,cp,gpus,combine,step_s,step_s_low,step_s_high,within_best_band,tokens_per_s,attention_layer_s,"
         "memory_bytes,capacity_bytes,max_seq_len,fits,simulated_step_s,extrapolation,cross_node_time_s,"
         "cross_node_calls,cross_node_bytes\n";
  auto line = [&](size_t rank, const model::PlannedLayout& c, const std::optional<double>& sim_s) {
    CsvRecord record;
    record.integer(static_cast<long long>(rank)).integer(c.layout.tp).integer(c.layout.cp).integer(c.layout.gpus());
    record.text(combine_name(c)).number(c.step.step_s).number(c.band.low_s).number(c.band.high_s);
    record.integer(c.within_best_band ? 1 : 0).number(c.step.tokens_per_s).number(c.attention.slowest.latency_s);
    record.number(c.step.memory.total)
        .number(c.step.memory.capacity)
        .integer(c.step.memory.max_seq_len)
        .integer(c.fits ? 1 : 0);
    if (sim_s) {
      record.number(*sim_s);  // was std::to_string: 6 decimals, 0.000012 for 12.3 us
    } else {
      record.empty();
    }
    record.text(c.extrapolation).number(c.cross_node.time_s).integer(c.cross_node.calls).number(c.cross_node.bytes);
    out << record.line();
  };
  for (size_t i = 0; i < plan.ranked.size(); ++i) line(i + 1, plan.ranked[i], simulated[i]);
  for (const model::PlannedLayout& c : plan.not_fitting) line(0, c, std::nullopt);
}

// The plan: the ranked choices' table and what it says (table), one line per choice (csv), or plan_json.
class DeploymentReport : public Report {
 public:
  DeploymentReport(const PlanReport& report, const PlanArgs& args, const PlanChoice& choice,
                   const topologies::Topology& topology)
      : report_(report), args_(args), choice_(choice), topology_(topology) {}
  void print_table(std::ostream& out) const override {
    print_choices(out, report_.plan, args_, report_.workload, choice_.seq_len, topology_, report_.simulated_step_s,
                  report_.errors);
  }
  void print_csv(std::ostream& out) const override { print_choices_csv(out, report_.plan, report_.simulated_step_s); }
  ordered_json json() const override { return plan_json(topology_, choice_, report_); }

 private:
  const PlanReport& report_;
  const PlanArgs& args_;
  const PlanChoice& choice_;
  const topologies::Topology& topology_;
};

void run(const PlanArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  const std::vector<long long> lengths = units::parse_token_counts(args.seq_len_text);
  if (lengths.size() != 1) throw topologies::InputError("--seq-len takes one length (sweep or crossover take several)");
  PlanChoice choice = args;
  choice.seq_len = lengths.front();
  const PlanReport report = plan_report(topology, choice, [&](int i, int n) {
    if (args.format == OutputFormat::table && progress_shown())
      std::cerr << "simulating choice " << i + 1 << " of " << n << "...\n";
  });
  make_reporter(args.format, std::cout)->report(DeploymentReport(report, args, choice, topology));
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto* command = app.add_subcommand("plan", "Rank every TP x CP layout and combine by time per output token");
  auto args = std::make_shared<PlanArgs>();
  add_cluster_option(*command, args->cluster);
  command->add_option("--workload", args->workload, "A workload preset, YAML file or Hugging Face config.json")
      ->capture_default_str();
  command
      ->add_option("--seq-len", args->seq_len_text,
                   std::string("The context length: 128k, 1M; ") + topologies::kTokenCountRule)
      ->required();
  command->add_option("--batch", args->batch, "Sequences decoded together (default: the workload's)")
      ->check(CLI::Range(1, 1 << 30));
  command->add_option("--gpus-max", args->gpus_max, "Use at most this many GPUs (default: all)")
      ->check(CLI::Range(1, 1 << 30));
  command->add_option("--algo", args->combines, "Combines to try (default: all): " + model::decode_algorithm_names())
      ->delimiter(',');
  add_impl_option(*command, args->impl);
  command
      ->add_option("--tpot-target", args->tpot_target_ms,
                   "A time per output token in ms: each choice at the largest batch that meets it (and fits), ranked "
                   "by output tokens/s per GPU")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--ep-kernel", args->ep_kernel,
                   "MoE models' expert-parallel choices: nccl, low-latency or normal (the dispatch/combine kernel)")
      ->check(CLI::IsMember({"nccl", "low-latency", "normal"}))
      ->capture_default_str();
  command->add_option("--top", args->top, "Rows shown")->check(CLI::Range(1, 1 << 30))->capture_default_str();
  command->add_option("--confirm", args->confirm, "Replay the best this many in the simulator (0: none)")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  add_format_option(*command, args->format, {OutputFormat::table, OutputFormat::json, OutputFormat::csv});
  add_progress_flag(*command);
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
