#include "treering/analysis/crossover_tp.hpp"

#include "treering/analysis/workload_files.hpp"
#include "treering/model/plan.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

namespace treering::analysis {
namespace {

using nlohmann::ordered_json;

Contest contest(const topologies::Topology& topology, const model::Workload& workload, long long seq_len,
                const model::PlannerOptions& options) {
  Contest c{topology.gpu_count(), workload.batch, seq_len, std::nullopt, std::nullopt};
  for (const model::PlannedLayout& choice : model::plan_deployment(topology, workload, seq_len, options).ranked) {
    std::optional<model::PlannedLayout>& slot = choice.layout.cp > 1 ? c.cp : c.tp;
    if (!slot || choice.step.step_s < slot->step.step_s) slot = choice;  // the fastest (ranked puts a tie first)
  }
  return c;
}

// Per batch, the shortest length from which cp wins at every longer one where a layout fits (where neither fits
// there is no contest: it neither breaks nor extends the run). [first, end): one GPU count's, batches inner.
CpVsTpSummary summary(const std::vector<Contest>& contests, std::size_t first, std::size_t end,
                      std::size_t batch_count) {
  std::vector<std::vector<LengthOutcome>> by_length(batch_count);
  for (std::size_t i = first; i < end; ++i) {
    const Contest& c = contests[i];
    const Outcome outcome = !c.cp && !c.tp ? Outcome::no_contest : c.cp_wins() ? Outcome::wins : Outcome::loses;
    by_length[(i - first) % batch_count].push_back({c.seq_len, outcome});
  }
  CpVsTpSummary s{contests[first].gpus, {}};
  for (const std::vector<LengthOutcome>& outcomes : by_length) s.cp_wins_from.push_back(wins_from(outcomes));
  return s;
}

ordered_json choice_json(const std::optional<model::PlannedLayout>& c) {
  if (!c) return nullptr;
  return {{"tp", c->layout.tp},
          {"cp", c->layout.cp},
          {"combine", c->tp_only ? "none" : model::to_string(c->algorithm)},
          {"step_s", c->step.step_s},
          {"step_s_low", c->band.low_s},
          {"step_s_high", c->band.high_s},
          {"max_seq_len", c->step.memory.max_seq_len}};
}

}  // namespace

CpVsTpResult run_cp_vs_tp(const CrossoverRequest& request, const std::function<void(int, long long, int)>& on_case) {
  if (request.engine != validate::Engine::model)
    throw topologies::InputError("--vs tp runs the model only (treering plan --confirm replays the best)");
  check_crossover_request(request);
  const model::Workload base = load_workload(request.workload);
  CpVsTpResult result;
  result.batches = request.batches.empty() ? std::vector<int>{base.batch} : request.batches;
  model::PlannerOptions options;
  for (const std::string& name : request.algorithms) options.combines.push_back(model::parse_decode_algorithm(name));
  options.plan.impl = load_impl(request.impl);
  for (int nodes : request.nodes) {
    const topologies::Topology topology = topologies::build_topology(request.cluster, {nodes, {}, request.settings});
    result.errors = options.errors = model::prediction_errors(topology, *options.plan.impl, false);
    for (long long seq_len : request.seq_lens) {
      for (int batch : result.batches) {
        if (on_case) on_case(topology.gpu_count(), seq_len, batch);
        model::Workload workload = base;
        workload.batch = batch;
        result.contests.push_back(contest(topology, workload, seq_len, options));
      }
    }
  }
  for (std::size_t first = 0, end = 0; first < result.contests.size(); first = end) {  // runs of one GPU count
    while (end < result.contests.size() && result.contests[end].gpus == result.contests[first].gpus) ++end;
    result.summaries.push_back(summary(result.contests, first, end, result.batches.size()));
  }
  return result;
}

ordered_json cp_vs_tp_json(const CpVsTpResult& result) {
  ordered_json rows = ordered_json::array();
  for (const Contest& c : result.contests) {
    rows.push_back({{"gpus", c.gpus},
                    {"batch", c.batch},
                    {"seq_len", c.seq_len},
                    {"cp_best", choice_json(c.cp)},
                    {"tp_best", choice_json(c.tp)},
                    {"speedup", c.cp && c.tp ? ordered_json(c.speedup()) : ordered_json()},
                    {"winner", c.winner()},
                    {"within_band", c.uncertain()}});
  }
  return rows;
}

}  // namespace treering::analysis
