// treering predict: the analytical model's decode latency, volume and memory for algorithms x lengths.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/analysis/decode_output.hpp"
#include "layout_args.hpp"
#include "treering/model/layout_model.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "table.hpp"
#include "treering/model/decode.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using nlohmann::ordered_json;

struct PredictArgs : DecodeArgs {
  PredictArgs() { algorithms = {"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"}; }
  LayoutArgs layout;
};

// The step columns (--scope layer|step): the whole layer or step around the attention, its memory and the
// longest context that fits.
void add_step_cells(const DecodeRow& row, std::vector<std::string>& cells) {
  const model::StepResult& step = *row.step;
  cells.push_back(topologies::format_duration(step.layer_s));
  if (step.scope == model::Scope::step) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f", step.tokens_per_s);
    cells.push_back(topologies::format_duration(step.step_s));
    cells.push_back(rate);
  }
  cells.push_back(topologies::format_bytes(step.memory.total));
  cells.push_back(std::to_string(step.memory.max_seq_len));
}

void print_predictions(std::ostream& out, const std::vector<DecodeRow>& rows, const PredictArgs& args,
                       const topologies::Topology& topology, const model::Workload& workload) {
  const bool batches =
      std::any_of(rows.begin(), rows.end(), [&](const DecodeRow& row) { return row.batch != rows.front().batch; });
  const bool step = !rows.empty() && rows.front().step.has_value();
  out << workload.name << (batches ? "" : " (batch " + std::to_string(workload.batch) + ")") << " on "
      << topology.spec().name << ": " << count_of(topology.node_count(), "node") << ", "
      << (rows.empty() ? 0 : rows.front().result.gpus) << " GPUs used (" << model::layout_name(rows.front().layout)
      << ") — analytical model, "
      << (step ? "attention columns: one layer's combine; then the " +
                     std::string(model::to_string(args.layout.scope)) + " around it"
               : "one attention layer per row")
      << "\nimplementation: " << args.impl << band_line(rows) << '\n'
      << calibration_line(topology) << "\n\n";
  std::vector<std::string> header{"tokens"};
  if (batches) header.push_back("batch");
  for (const char* name : {"algorithm", "latency", "band", "compute", "comm intra", "comm inter", "overlapped",
                           "sent/GPU", "inter-node"}) {
    header.push_back(name);
  }
  const bool host =
      std::any_of(rows.begin(), rows.end(), [](const DecodeRow& row) { return row.result.breakdown.host_s > 0; });
  if (host) header.push_back("host");
  const bool per_token = !step && (workload.layers > 1 || workload.parameters > 0);
  if (!step) header.push_back("memory/GPU");
  if (per_token) header.push_back("per token");
  if (step) {
    header.push_back("layer");
    if (args.layout.scope == model::Scope::step) header.insert(header.end(), {"per token", "tokens/s"});
    header.insert(header.end(), {"memory/GPU", "max context"});
  }
  if (args.tokens) header.push_back("generation");
  const bool calibrated = topology.spec().calibration.has_value();
  if (calibrated) header.push_back("calibration");
  std::vector<const DecodeRow*> listed;
  for (const DecodeRow& row : rows) listed.push_back(&row);
  const bool marks = any_does_not_fit(listed);
  if (marks) header.push_back("fits");
  Table table(header);
  for (const DecodeRow& row : rows) {
    const model::DecodeResult& r = row.result;
    std::vector<std::string> cells{std::to_string(r.seq_len)};
    if (batches) cells.push_back(std::to_string(row.batch));
    cells.insert(
        cells.end(),
        {model::to_string(r.algorithm), topologies::format_duration(r.latency_s), format_band(row.latency_band),
         topologies::format_duration(r.breakdown.compute_s), topologies::format_duration(r.breakdown.intra_node_s),
         topologies::format_duration(r.breakdown.inter_node_s),
         topologies::format_duration(r.breakdown.overlapped_communication_s),
         topologies::format_bytes(r.volume.per_gpu), topologies::format_bytes(r.volume.inter_node)});
    if (host) cells.push_back(topologies::format_duration(r.breakdown.host_s));
    if (!step) cells.push_back(topologies::format_bytes(r.memory.total));
    if (per_token) cells.push_back(topologies::format_duration(r.token_s));
    if (step) add_step_cells(row, cells);
    if (args.tokens) cells.push_back(topologies::format_duration(row.generation_s.value_or(0)));
    if (calibrated) cells.push_back(calibration_marker(row));
    if (marks) cells.push_back(row.memory_shortfall.empty() ? "" : "no !");
    table.add_row(cells);
  }
  table.print(out);
  print_extrapolation_notes(out, listed);
}

// predict's rows: the table above, print_decode_csv's rows (csv), or each row's decode_json (json).
class PredictReport : public Report {
 public:
  PredictReport(const std::vector<DecodeRow>& rows, const PredictArgs& args, const topologies::Topology& topology,
                const model::Workload& workload)
      : rows_(rows), args_(args), topology_(topology), workload_(workload) {}
  void print_table(std::ostream& out) const override { print_predictions(out, rows_, args_, topology_, workload_); }
  void print_csv(std::ostream& out) const override { print_decode_csv(out, rows_); }
  ordered_json json() const override {
    ordered_json list = ordered_json::array();
    for (const DecodeRow& row : rows_) list.push_back(decode_json(row));
    return list;
  }

 private:
  const std::vector<DecodeRow>& rows_;
  const PredictArgs& args_;
  const topologies::Topology& topology_;
  const model::Workload& workload_;
};

void run(const PredictArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  const DecodeRequest request = decode_request(args, args.layout);
  const std::vector<DecodeRow> rows = predict_rows(topology, request);
  make_reporter(args.format, std::cout)->report(PredictReport(rows, args, topology, request.workloads.front()));
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto* command = app.add_subcommand("predict", "Predict decode latency, volume and memory of tree vs ring attention");
  command->footer(model::decode_algorithm_help());
  auto args = std::make_shared<PredictArgs>();
  add_decode_options(*command, *args, "Algorithms: " + model::decode_algorithm_names(),
                     {OutputFormat::table, OutputFormat::json, OutputFormat::csv});
  add_layout_options(*command, args->layout);
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
