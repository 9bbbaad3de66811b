#include "sweep_table.hpp"

#include <cstdio>
#include <map>
#include <tuple>

#include "table.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

namespace fmt = treering::topologies;

// A case without its engine: the model's and the simulator's rows of it share one line.
// cluster nodes, gpus, workload, batch, seq_len, algorithm (a layout may use the same GPUs of several node counts).
using CaseKey = std::tuple<int, int, std::string, int, long long, int>;

CaseKey key_of(const DecodeRow& row, model::DecodeAlgorithm algorithm) {
  return {row.cluster_nodes, row.result.gpus, row.workload, row.batch, row.result.seq_len, static_cast<int>(algorithm)};
}

// "tp 8 x cp 2", with " x 2 replicas" and ", cp-inner" when the layout has them.
std::string layout_cell(const DecodeRow& row) {
  std::string text = "tp " + std::to_string(row.layout.tp) + " x cp " + std::to_string(row.layout.cp);
  if (row.layout.replicas > 1) text += " x " + std::to_string(row.layout.replicas) + " replicas";
  if (row.placement != model::LayoutOrder::tp_inner) text += std::string(", ") + model::to_string(row.placement);
  return text;
}

// A sweep given --tp, --cp, --replicas or --placement shows its layout; the default (cp over all GPUs) does not.
bool shows_layout(const std::vector<DecodeRow>& rows) {
  for (const DecodeRow& row : rows) {
    if (row.layout.tp != 1 || row.layout.replicas != 1 || row.placement != model::LayoutOrder::tp_inner) return true;
  }
  return false;
}

// --scope layer|step: the layer's or the whole step's time per engine, after the attention's ("layer", "per token").
std::string scope_header(const std::vector<DecodeRow>& rows) {
  for (const DecodeRow& row : rows) {
    if (row.step) return row.step->scope == model::Scope::step ? "per token" : "layer";
  }
  return "";
}

std::string speedup(double ring_s, double latency_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", ring_s / latency_s);
  return text;
}

}  // namespace

void print_sweep_table(std::ostream& out, const std::vector<DecodeRow>& rows) {
  bool model = false, sim = false;
  std::map<CaseKey, std::map<validate::Engine, const DecodeRow*>> by_case;  // -> engine -> row
  std::vector<CaseKey> order;
  for (const DecodeRow& row : rows) {
    (row.engine == validate::Engine::sim ? sim : model) = true;
    const CaseKey key = key_of(row, row.result.algorithm);
    if (!by_case.count(key)) order.push_back(key);
    by_case[key][row.engine] = &row;
  }
  const bool layout = shows_layout(rows);
  const std::string scope = scope_header(rows);
  std::vector<std::string> header;
  if (layout) header.push_back("nodes");  // the cluster's: a layout may leave some of them idle
  header.push_back("GPUs");
  if (layout) header.push_back("layout");
  header.insert(header.end(), {"workload", "batch", "tokens", "algorithm"});
  if (model) header.insert(header.end(), {"model", "vs ring"});
  if (sim) header.insert(header.end(), {"simulated", "vs ring"});
  if (!scope.empty() && model) header.push_back(scope + (sim ? " (model)" : ""));
  if (!scope.empty() && sim) header.push_back(scope + (model ? " (sim)" : ""));
  header.insert(header.end(), {"sent/GPU", "intra-node", "inter-node", "memory/GPU"});
  std::vector<const DecodeRow*> listed;
  for (const DecodeRow& row : rows) {
    if (row.engine == rows.front().engine) listed.push_back(&row);  // one note per case, not per engine
  }
  const bool marks = any_does_not_fit(listed);
  if (marks) header.push_back("fits");
  Table table(header);
  for (const CaseKey& key : order) {
    const auto& engines = by_case.at(key);
    const DecodeRow& any = *engines.begin()->second;
    std::vector<std::string> cells;
    if (layout) cells.push_back(std::to_string(any.cluster_nodes));
    cells.push_back(std::to_string(any.result.gpus));
    if (layout) cells.push_back(layout_cell(any));
    cells.insert(cells.end(), {any.workload, std::to_string(any.batch), fmt::format_token_count(any.result.seq_len),
                               model::to_string(any.result.algorithm)});
    const auto ring = by_case.find(key_of(any, model::DecodeAlgorithm::ring));
    for (const validate::Engine engine : {validate::Engine::model, validate::Engine::sim}) {
      if ((engine == validate::Engine::model && !model) || (engine == validate::Engine::sim && !sim)) continue;
      const auto it = engines.find(engine);
      const bool have_ring = ring != by_case.end() && ring->second.count(engine);
      cells.push_back(it == engines.end() ? "-" : fmt::format_duration(it->second->result.latency_s));
      cells.push_back(it == engines.end() || !have_ring
                          ? "-"
                          : speedup(ring->second.at(engine)->result.latency_s, it->second->result.latency_s));
    }
    for (const validate::Engine engine : {validate::Engine::model, validate::Engine::sim}) {
      if (scope.empty() || (engine == validate::Engine::model && !model) || (engine == validate::Engine::sim && !sim))
        continue;
      const auto it = engines.find(engine);
      const bool has_step = it != engines.end() && it->second->step;
      const model::StepResult* step = has_step ? &*it->second->step : nullptr;
      cells.push_back(step ? fmt::format_duration(step->scope == model::Scope::step ? step->step_s : step->layer_s)
                           : "-");
    }
    cells.insert(cells.end(),
                 {fmt::format_bytes(any.result.volume.per_gpu), fmt::format_bytes(any.result.volume.intra_node),
                  fmt::format_bytes(any.result.volume.inter_node), fmt::format_bytes(any.result.memory.total)});
    if (marks) cells.push_back(any.memory_shortfall.empty() ? "" : "no !");
    table.add_row(cells);
  }
  table.print(out);
  print_memory_notes(out, listed);
}

}  // namespace treering::cli
