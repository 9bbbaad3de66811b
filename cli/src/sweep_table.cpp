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
using CaseKey = std::tuple<int, std::string, int, long long, int>;  // gpus, workload, batch, seq_len, algorithm

CaseKey key_of(const DecodeRow& row, model::DecodeAlgorithm algorithm) {
  return {row.result.gpus, row.workload, row.batch, row.result.seq_len, static_cast<int>(algorithm)};
}

std::string speedup(double ring_s, double latency_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", ring_s / latency_s);
  return text;
}

}  // namespace

void print_sweep_table(std::ostream& out, const std::vector<DecodeRow>& rows) {
  bool model = false, sim = false;
  std::map<CaseKey, std::map<std::string, const DecodeRow*>> by_case;  // -> engine -> row
  std::vector<CaseKey> order;
  for (const DecodeRow& row : rows) {
    (row.engine == "sim" ? sim : model) = true;
    const CaseKey key = key_of(row, row.result.algorithm);
    if (!by_case.count(key)) order.push_back(key);
    by_case[key][row.engine] = &row;
  }
  std::vector<std::string> header{"GPUs", "workload", "batch", "tokens", "algorithm"};
  if (model) header.insert(header.end(), {"model", "vs ring"});
  if (sim) header.insert(header.end(), {"simulated", "vs ring"});
  header.insert(header.end(), {"sent/GPU", "intra-node", "inter-node", "memory/GPU"});
  Table table(header);
  for (const CaseKey& key : order) {
    const auto& engines = by_case.at(key);
    const DecodeRow& any = *engines.begin()->second;
    std::vector<std::string> cells{std::to_string(any.result.gpus), any.workload, std::to_string(any.batch),
                                   fmt::format_token_count(any.result.seq_len), model::to_string(any.result.algorithm)};
    const auto ring = by_case.find(key_of(any, model::DecodeAlgorithm::ring));
    for (const char* engine : {"model", "sim"}) {
      if ((engine == std::string("model") && !model) || (engine == std::string("sim") && !sim)) continue;
      const auto it = engines.find(engine);
      const bool have_ring = ring != by_case.end() && ring->second.count(engine);
      cells.push_back(it == engines.end() ? "-" : fmt::format_duration(it->second->result.latency_s));
      cells.push_back(it == engines.end() || !have_ring ? "-" : speedup(ring->second.at(engine)->result.latency_s, it->second->result.latency_s));
    }
    cells.insert(cells.end(), {fmt::format_bytes(any.result.volume.per_gpu), fmt::format_bytes(any.result.volume.intra_node),
                               fmt::format_bytes(any.result.volume.inter_node), fmt::format_bytes(any.result.memory.total)});
    table.add_row(cells);
  }
  table.print(out);
}

}  // namespace treering::cli
