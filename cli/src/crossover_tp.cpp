// crossover --vs tp (crossover_tp.hpp).
#include "replay_progress.hpp"
#include "crossover_tp.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/crossover.hpp"
#include "treering/analysis/csv.hpp"
#include "table.hpp"
#include "treering/model/planner.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/units.hpp"
#include "treering/analysis/workload_files.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

namespace units = treering::topologies;
using nlohmann::ordered_json;

struct Contest {
  int gpus = 0;
  int batch = 0;
  long long seq_len = 0;
  std::optional<model::PlannedLayout> cp;                               // the fastest with cp > 1 that fits
  std::optional<model::PlannedLayout> tp;                               // the fastest with cp = 1 that fits
  double speedup() const { return tp->step.step_s / cp->step.step_s; }  // > 1: context parallelism wins
  bool uncertain() const { return cp && tp && model::bands_overlap(cp->band, tp->band); }
};

Contest contest(const topologies::Topology& topology, const model::Workload& workload, long long seq_len,
                const model::PlannerOptions& options) {
  Contest c{topology.gpu_count(), workload.batch, seq_len, std::nullopt, std::nullopt};
  for (const model::PlannedLayout& choice : model::plan_deployment(topology, workload, seq_len, options).ranked) {
    std::optional<model::PlannedLayout>& slot = choice.layout.cp > 1 ? c.cp : c.tp;
    if (!slot || choice.step.step_s < slot->step.step_s) slot = choice;  // the fastest (ranked puts a tie first)
  }
  return c;
}

std::string layout_text(const model::PlannedLayout& c) {
  return std::to_string(c.layout.tp) + "x" + std::to_string(c.layout.cp) +
         (c.tp_only ? "" : std::string(" ") + model::to_string(c.algorithm));
}

std::string cell_text(const Contest& c) {
  if (!c.cp && !c.tp) return "neither fits";
  if (!c.tp) return "only cp fits (" + layout_text(*c.cp) + ")";
  if (!c.cp) return "only tp fits (" + layout_text(*c.tp) + ")";
  char ratio[32];
  const double r = c.speedup();
  std::snprintf(ratio, sizeof ratio, "%.2fx", r >= 1 ? r : 1 / r);
  return (r >= 1 ? std::string(ratio) + " " + layout_text(*c.cp)
                 : "tp " + std::string(ratio) + " " + layout_text(*c.tp)) +
         (c.uncertain() ? " ~" : "");
}

bool cp_wins(const Contest& c) { return c.cp && (!c.tp || c.speedup() > 1); }

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

void print_table(const std::vector<Contest>& contests, const CpVsTpRequest& r, const std::vector<int>& batches,
                 const model::RelativeErrors& errors) {
  std::cout << "context parallelism vs plain TP on " << r.cluster << ", " << r.workload
            << " (model): time per output token of the best tp x cp (cp > 1) and combine over the best tp only; "
               "'tp 1.2x' where plain TP wins\n";
  for (size_t first = 0; first < contests.size();) {
    const int gpus = contests[first].gpus;
    std::cout << '\n' << gpus << " GPUs\n";
    std::vector<std::string> header{"tokens \\ batch"};
    for (int batch : batches) header.push_back(std::to_string(batch));
    Table table(header);
    std::vector<std::string> wins{"cp wins from"};
    std::vector<std::vector<LengthOutcome>> by_length(batches.size());  // per batch
    for (size_t row = first; row < contests.size() && contests[row].gpus == gpus; row += batches.size()) {
      std::vector<std::string> cells{units::format_token_count(contests[row].seq_len)};
      for (size_t b = 0; b < batches.size(); ++b) cells.push_back(cell_text(contests[row + b]));
      table.add_row(cells);
    }
    size_t end = first;
    while (end < contests.size() && contests[end].gpus == gpus) ++end;
    // The shortest length from which cp wins at every longer one where a layout fits (where neither fits there is
    // no contest: it neither breaks nor extends the run).
    for (size_t i = first; i < end; ++i) {
      const Contest& c = contests[i];
      by_length[(i - first) % batches.size()].push_back({c.seq_len, !c.cp && !c.tp ? Outcome::no_contest
                                                                    : cp_wins(c)   ? Outcome::wins
                                                                                   : Outcome::loses});
    }
    for (const std::vector<LengthOutcome>& outcomes : by_length) {
      const std::optional<long long> from = wins_from(outcomes);
      wins.push_back(from ? units::format_token_count(*from) : "never");
    }
    table.add_row(wins);
    table.print(std::cout);
    first = end;
  }
  std::cout << "layouts: tp x cp and the combine; ~: within each other's band (" << errors_text(errors)
            << "): the model cannot say which wins\n";
}

void print_data(const std::vector<Contest>& contests, const std::string& format) {
  if (format == "csv") {
    std::cout << "gpus,batch,seq_len,cp_tp,cp_cp,cp_combine,cp_step_s,tp_tp,tp_step_s,speedup,winner,within_band\n";
    for (const Contest& c : contests) {
      CsvRecord record;
      record.integer(c.gpus).integer(c.batch).integer(c.seq_len);
      if (c.cp) {
        record.integer(c.cp->layout.tp)
            .integer(c.cp->layout.cp)
            .text(model::to_string(c.cp->algorithm))
            .number(c.cp->step.step_s);
      } else {
        record.empty().empty().empty().empty();
      }
      if (c.tp) {
        record.integer(c.tp->layout.tp).number(c.tp->step.step_s);
      } else {
        record.empty().empty();
      }
      if (c.cp && c.tp) {
        record.number(c.speedup());
      } else {
        record.empty();
      }
      record.text(cp_wins(c) ? "cp" : c.tp ? "tp" : "none").text(c.uncertain() ? "true" : "false");
      std::cout << record.line();
    }
    return;
  }
  ordered_json rows = ordered_json::array();
  for (const Contest& c : contests) {
    rows.push_back({{"gpus", c.gpus},
                    {"batch", c.batch},
                    {"seq_len", c.seq_len},
                    {"cp_best", choice_json(c.cp)},
                    {"tp_best", choice_json(c.tp)},
                    {"speedup", c.cp && c.tp ? ordered_json(c.speedup()) : ordered_json()},
                    {"winner", cp_wins(c) ? "cp"
                               : c.tp     ? "tp"
                                          : "none"},
                    {"within_band", c.uncertain()}});
  }
  std::cout << rows.dump(2) << '\n';
}

}  // namespace

void print_cp_vs_tp(const CpVsTpRequest& r) {
  const model::Workload base = load_workload(r.workload);
  const std::vector<int> batches = r.batches.empty() ? std::vector<int>{base.batch} : r.batches;
  model::PlannerOptions options;
  for (const std::string& name : r.combines) options.combines.push_back(model::parse_decode_algorithm(name));
  options.plan.impl = load_impl(r.impl);
  std::vector<Contest> contests;
  model::RelativeErrors errors;
  for (int nodes : r.nodes) {
    const topologies::Topology topology = topologies::build_topology(r.cluster, {nodes, {}, r.settings});
    errors = options.errors = model::prediction_errors(topology, *options.plan.impl, false);
    for (long long seq_len : r.seq_lens) {
      for (int batch : batches) {
        if (r.format == "table" && progress_shown())
          std::cerr << "planning " << topology.gpu_count() << " GPUs, " << seq_len << " tokens, batch " << batch
                    << "...\r";
        model::Workload workload = base;
        workload.batch = batch;
        contests.push_back(contest(topology, workload, seq_len, options));
      }
    }
  }
  if (r.format == "table") {
    if (progress_shown()) std::cerr << std::string(60, ' ') << '\r';
    return print_table(contests, r, batches, errors);
  }
  print_data(contests, r.format);
}

}  // namespace treering::cli
