// treering plan: which layout (tp x cp) and combine gives the lowest time per output token for a model on a
// cluster at a context length and batch (model::plan_deployment), with memory headroom, the longest context
// each fits, '~' where a choice's band meets the best one's, and the best few confirmed by the simulator
// (every CP group's attention replayed, the step rebuilt around the slowest).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "decode_output.hpp"
#include "csv.hpp"
#include "table.hpp"
#include "treering/model/planner.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;
namespace units = treering::topologies;

struct PlanArgs {
  ClusterArgs cluster;
  std::string workload = "llama3.1-8b";
  std::string seq_len;
  int batch = 0;  // 0: the workload's
  int gpus_max = 0;
  std::vector<std::string> combines;
  std::string impl = "efficient";
  int top = 12;
  int confirm = 3;
  std::string format = "table";
};

// The simulator's time per output token of a choice: each CP group's attention replayed, the slowest kept.
double simulated_step_s(const topologies::Topology& topology, const model::PlannedLayout& choice, const model::Workload& workload,
                        long long seq_len, const model::PlanOptions& options) {
  const model::LayoutModel layouts(topology, model::place_layout(topology, choice.layout));
  model::LayoutAttention attention = choice.attention;
  double slowest_s = 0;
  for (int t = 0; t < choice.layout.tp; ++t) {
    const model::DecodePlan plan = layouts.plan(t, choice.algorithm, workload, seq_len, options);
    slowest_s = std::max(slowest_s, sim::replay_plan(layouts.cp_model(t), plan).latency_s);
  }
  attention.slowest.latency_s = slowest_s;
  return model::evaluate_step(layouts, attention, choice.algorithm, workload, seq_len, model::Scope::step).step_s;
}

std::string combine_name(const model::PlannedLayout& choice) {
  return choice.tp_only ? "none (tp only)" : model::to_string(choice.algorithm);
}

ordered_json choice_json(const model::PlannedLayout& c, const std::optional<double>& simulated_s) {
  const model::StepResult& s = c.step;
  ordered_json json = {{"tp", c.layout.tp}, {"cp", c.layout.cp}, {"gpus", c.layout.gpus()}, {"combine", combine_name(c)},
                       {"algo", model::to_string(c.algorithm)}, {"tp_only", c.tp_only}, {"step_s", s.step_s},
                       {"step_s_low", c.band.low_s}, {"step_s_high", c.band.high_s}, {"within_best_band", c.within_best_band},
                       {"network_latency_s", c.network_latency_s},
                       {"tokens_per_s", s.tokens_per_s}, {"attention_layer_s", c.attention.slowest.latency_s},
                       {"breakdown", {{"attention_s", s.breakdown.attention_s}, {"projections_s", s.breakdown.projections_s},
                                      {"mlp_s", s.breakdown.mlp_s}, {"tp_communication_s", s.breakdown.tp_communication_s},
                                      {"other_s", s.breakdown.other_s}, {"lm_head_s", s.breakdown.lm_head_s}}},
                       {"memory_bytes", {{"weights", s.memory.weights}, {"kv_cache", s.memory.kv_cache},
                                         {"total", s.memory.total}, {"capacity", s.memory.capacity},
                                         {"headroom", s.memory.capacity - s.memory.total}}},
                       {"max_seq_len", s.memory.max_seq_len}, {"fits", c.fits}, {"extrapolation", c.extrapolation}};
  if (simulated_s) json["simulated_step_s"] = *simulated_s;
  return json;
}

void print_table(const model::DeploymentPlan& plan, const PlanArgs& args, const model::Workload& workload, long long seq_len,
                 const topologies::Topology& topology, const std::vector<std::optional<double>>& simulated,
                 const model::RelativeErrors& errors) {
  std::cout << workload.name << ", batch " << workload.batch << ", " << seq_len << " tokens of context on "
            << topology.spec().name << " (" << topology.gpu_count() << " GPUs) — time per output token, analytical "
            << "model\nimplementation: " << args.impl << "; band: " << errors_text(errors)
            << "; ~: within the best one's band; x-node lat: the share of the time that is communication across nodes "
            << "at latency-bound sizes, where the model is least sure; simulated: the attention replayed with shared links"
            << (topology.spec().calibration ? "; *: outside what the calibration measured (listed below)" : "") << "\n\n";
  Table table({"#", "tp x cp", "combine", "per token", "band", "", "x-node lat", "tokens/s", "attention", "memory/GPU", "headroom",
               "max context", "simulated", ""});
  std::vector<std::string> notes;
  for (size_t i = 0; i < plan.ranked.size() && static_cast<int>(i) < args.top; ++i) {
    const model::PlannedLayout& c = plan.ranked[i];
    char tokens[32], network[32];
    std::snprintf(tokens, sizeof tokens, "%.1f", c.step.tokens_per_s);
    std::snprintf(network, sizeof network, "%.0f %%", 100 * c.network_latency_s / c.step.step_s);
    table.add_row({std::to_string(i + 1), std::to_string(c.layout.tp) + " x " + std::to_string(c.layout.cp), combine_name(c),
                   units::format_duration(c.step.step_s), format_band(c.band), c.within_best_band ? "~" : "",
                   c.network_latency_s > 0 ? network : "", tokens,
                   units::format_duration(c.attention.slowest.latency_s), units::format_bytes(c.step.memory.total),
                   units::format_bytes(c.step.memory.capacity - c.step.memory.total), std::to_string(c.step.memory.max_seq_len),
                   i < simulated.size() && simulated[i] ? units::format_duration(*simulated[i]) : "",
                   c.extrapolation.empty() ? "" : "*"});
    if (!c.extrapolation.empty()) notes.push_back("* #" + std::to_string(i + 1) + ": " + c.extrapolation);
  }
  table.print(std::cout);
  for (const std::string& note : notes) std::cout << note << '\n';
  std::cout << plan.ranked.size() << " choices fit";
  if (static_cast<int>(plan.ranked.size()) > args.top) std::cout << " (" << args.top << " shown: --top)";
  if (!plan.not_fitting.empty()) {
    const model::PlannedLayout& least = plan.not_fitting.front();
    std::cout << "; " << plan.not_fitting.size() << " do not (the smallest need, tp " << least.layout.tp << " x cp "
              << least.layout.cp << ", " << units::format_bytes(least.step.memory.total) << " per GPU of "
              << units::format_bytes(least.step.memory.capacity) << ")";
  }
  std::cout << '\n';
  for (const std::string& why : plan.skipped) std::cout << "skipped " << why << '\n';
}

void run(const PlanArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  model::Workload workload = load_workload(args.workload);
  if (args.batch > 0) workload.batch = args.batch;
  const std::vector<long long> lengths = units::parse_token_counts(args.seq_len);
  if (lengths.size() != 1) throw std::invalid_argument("--seq-len takes one length (sweep or crossover take several)");
  model::PlannerOptions options;
  options.gpus_max = args.gpus_max;
  for (const std::string& name : args.combines) options.combines.push_back(model::parse_decode_algorithm(name));
  options.plan.impl = load_impl(args.impl);
  options.errors = model::prediction_errors(topology, *options.plan.impl, false);
  const model::DeploymentPlan plan = model::plan_deployment(topology, workload, lengths.front(), options);
  if (plan.ranked.empty()) throw std::invalid_argument("no layout fits: " + std::to_string(plan.not_fitting.size()) + " tried");
  std::vector<std::optional<double>> simulated(plan.ranked.size());
  for (int i = 0; i < args.confirm && i < static_cast<int>(plan.ranked.size()); ++i) {
    if (args.format == "table") std::cerr << "simulating choice " << i + 1 << " of " << args.confirm << "...\n";
    simulated[static_cast<size_t>(i)] = simulated_step_s(topology, plan.ranked[static_cast<size_t>(i)], workload, lengths.front(), options.plan);
  }
  if (args.format == "table") return print_table(plan, args, workload, lengths.front(), topology, simulated, options.errors);
  if (args.format == "csv") {
    std::cout << "rank,tp,cp,gpus,combine,step_s,step_s_low,step_s_high,within_best_band,tokens_per_s,attention_layer_s,"
                 "memory_bytes,capacity_bytes,max_seq_len,fits,simulated_step_s,extrapolation\n";
    auto line = [&](size_t rank, const model::PlannedLayout& c, const std::optional<double>& sim_s) {
      CsvRecord record;
      record.integer(static_cast<long long>(rank)).integer(c.layout.tp).integer(c.layout.cp).integer(c.layout.gpus());
      record.text(combine_name(c)).number(c.step.step_s).number(c.band.low_s).number(c.band.high_s);
      record.integer(c.within_best_band ? 1 : 0).number(c.step.tokens_per_s).number(c.attention.slowest.latency_s);
      record.number(c.step.memory.total).number(c.step.memory.capacity).integer(c.step.memory.max_seq_len).integer(c.fits ? 1 : 0);
      if (sim_s) {
        record.number(*sim_s);  // was std::to_string: 6 decimals, 0.000012 for 12.3 us
      } else {
        record.empty();
      }
      record.text(c.extrapolation);
      std::cout << record.line();
    };
    for (size_t i = 0; i < plan.ranked.size(); ++i) line(i + 1, plan.ranked[i], simulated[i]);
    for (const model::PlannedLayout& c : plan.not_fitting) line(0, c, std::nullopt);
    return;
  }
  ordered_json ranked = ordered_json::array(), not_fitting = ordered_json::array();
  for (size_t i = 0; i < plan.ranked.size(); ++i) ranked.push_back(choice_json(plan.ranked[i], simulated[i]));
  for (const model::PlannedLayout& c : plan.not_fitting) not_fitting.push_back(choice_json(c, std::nullopt));
  std::cout << ordered_json{{"cluster", topology.spec().name}, {"gpus", topology.gpu_count()}, {"workload", workload.name},
                            {"batch", workload.batch}, {"seq_len", lengths.front()}, {"impl", args.impl},
                            {"uncertainty", {{"compute", options.errors.compute}, {"communication", options.errors.communication},
                                             {"network_latency", options.errors.network_latency},
                                             {"source", options.errors.source}}},
                            {"ranked", ranked}, {"not_fitting", not_fitting}, {"skipped", plan.skipped}}
                   .dump(2)
            << '\n';
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto* command = app.add_subcommand("plan", "Rank every TP x CP layout and combine by time per output token");
  auto args = std::make_shared<PlanArgs>();
  add_cluster_option(*command, args->cluster);
  command->add_option("--workload", args->workload, "A workload preset, YAML file or Hugging Face config.json")->capture_default_str();
  command->add_option("--seq-len", args->seq_len, "The context length: 128k, 1M")->required();
  command->add_option("--batch", args->batch, "Sequences decoded together (default: the workload's)")->check(CLI::Range(1, 1 << 30));
  command->add_option("--gpus-max", args->gpus_max, "Use at most this many GPUs (default: all)")->check(CLI::Range(1, 1 << 30));
  command->add_option("--algo", args->combines, "Combines to try (default: all): ring, tree, tree-fused, tree-lse, "
                                                "allgather-merge, pass-q, a2a, ag-rs")->delimiter(',');
  add_impl_option(*command, args->impl);
  command->add_option("--top", args->top, "Rows shown")->check(CLI::Range(1, 1 << 30))->capture_default_str();
  command->add_option("--confirm", args->confirm, "Replay the best this many in the simulator (0: none)")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  add_format_option(*command, args->format, {"table", "json", "csv"});
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
