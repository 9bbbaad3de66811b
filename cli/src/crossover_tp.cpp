// crossover --vs tp (crossover_tp.hpp): the tables, CSV and JSON of analysis::run_cp_vs_tp's contests.
#include "crossover_tp.hpp"

#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>

#include "replay_progress.hpp"
#include "table.hpp"
#include "treering/analysis/crossover_tp.hpp"
#include "treering/analysis/csv.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

namespace units = treering::topologies;

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

void print_contest_tables(std::ostream& out, const CpVsTpResult& result, const CrossoverRequest& r) {
  out << "context parallelism vs plain TP on " << r.cluster << ", " << r.workload
      << " (model): time per output token of the best tp x cp (cp > 1) and combine over the best tp only; "
         "'tp 1.2x' where plain TP wins\n";
  const std::vector<Contest>& contests = result.contests;
  const std::vector<int>& batches = result.batches;
  size_t first = 0;
  for (const CpVsTpSummary& summary : result.summaries) {
    out << '\n' << summary.gpus << " GPUs\n";
    std::vector<std::string> header{"tokens \\ batch"};
    for (int batch : batches) header.push_back(std::to_string(batch));
    Table table(header);
    size_t row = first;
    for (; row < contests.size() && contests[row].gpus == summary.gpus; row += batches.size()) {
      std::vector<std::string> cells{units::format_token_count(contests[row].seq_len)};
      for (size_t b = 0; b < batches.size(); ++b) cells.push_back(cell_text(contests[row + b]));
      table.add_row(cells);
    }
    std::vector<std::string> wins{"cp wins from"};
    for (const std::optional<long long>& from : summary.cp_wins_from)
      wins.push_back(from ? units::format_token_count(*from) : "never");
    table.add_row(wins);
    table.print(out);
    first = row;
  }
  out << "layouts: tp x cp and the combine; ~: within each other's band (" << errors_text(result.errors)
      << "): the model cannot say which wins\n";
}

void print_contests_csv(std::ostream& out, const std::vector<Contest>& contests) {
  out << "gpus,batch,seq_len,cp_tp,cp_cp,cp_combine,cp_step_s,tp_tp,tp_step_s,speedup,winner,within_band\n";
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
    record.text(c.winner()).text(c.uncertain() ? "true" : "false");
    out << record.line();
  }
}

// The contests: a table per GPU count, one line per contest (csv), or cp_vs_tp_json.
class CpVsTpReport : public Report {
 public:
  CpVsTpReport(const CpVsTpResult& result, const CrossoverRequest& request) : result_(result), request_(request) {}
  void print_table(std::ostream& out) const override { print_contest_tables(out, result_, request_); }
  void print_csv(std::ostream& out) const override { print_contests_csv(out, result_.contests); }
  nlohmann::ordered_json json() const override { return cp_vs_tp_json(result_); }

 private:
  const CpVsTpResult& result_;
  const CrossoverRequest& request_;
};

}  // namespace

void print_cp_vs_tp(const CrossoverRequest& request, OutputFormat format) {
  std::function<void(int, long long, int)> on_case;
  const bool progress = format == OutputFormat::table && progress_shown();
  if (progress) {
    on_case = [](int gpus, long long seq_len, int batch) {
      std::cerr << "planning " << gpus << " GPUs, " << seq_len << " tokens, batch " << batch << "...\r";
    };
  }
  const CpVsTpResult result = run_cp_vs_tp(request, on_case);
  if (progress) std::cerr << std::string(60, ' ') << '\r';
  make_reporter(format, std::cout)->report(CpVsTpReport(result, request));
}

}  // namespace treering::cli
