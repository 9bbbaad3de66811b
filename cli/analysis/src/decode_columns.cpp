#include "treering/analysis/decode_columns.hpp"

#include <cmath>

namespace treering::analysis {

namespace {

using R = const DecodeRow&;

Cell optional_number(const std::optional<double>& value) { return value ? Cell(*value) : Cell(); }

const model::StepResult* step_of(R row) { return row.step ? &*row.step : nullptr; }

// The list itself: the rows' CSV columns as they were before there was one list (README's "Output schema"), then
// what only JSON had (placement, cluster_nodes, first_call_s, the generation band, transfers_simulated).
std::vector<DecodeColumn> make_columns() {
  using C = Carried;
  return {
      {"algo", "algo", "", C::always, [](R r) -> Cell { return std::string(model::to_string(r.result.algorithm)); }},
      {"engine", "engine", "", C::always, [](R r) -> Cell { return std::string(validate::to_string(r.engine)); }},
      {"cluster", "cluster", "", C::always, [](R r) -> Cell { return r.cluster; }},
      {"nodes", "nodes", "nodes", C::always, [](R r) -> Cell { return static_cast<long long>(r.nodes_used); }},
      {"gpus", "gpus", "GPUs", C::always, [](R r) -> Cell { return static_cast<long long>(r.result.gpus); }},
      {"workload", "workload", "", C::always, [](R r) -> Cell { return r.workload; }},
      {"batch", "batch", "sequences", C::always, [](R r) -> Cell { return static_cast<long long>(r.batch); }},
      {"seq_len", "seq_len", "tokens", C::always, [](R r) -> Cell { return r.result.seq_len; }},
      {"latency_s", "latency_s", "s", C::always, [](R r) -> Cell { return r.result.latency_s; }},
      {"compute_s", "breakdown.compute_s", "s", C::always, [](R r) -> Cell { return r.result.breakdown.compute_s; }},
      {"intra_node_s", "breakdown.intra_node_s", "s", C::always,
       [](R r) -> Cell { return r.result.breakdown.intra_node_s; }},
      {"inter_node_s", "breakdown.inter_node_s", "s", C::always,
       [](R r) -> Cell { return r.result.breakdown.inter_node_s; }},
      {"overlapped_communication_s", "breakdown.overlapped_communication_s", "s", C::always,
       [](R r) -> Cell { return r.result.breakdown.overlapped_communication_s; }},
      {"volume_per_gpu_bytes", "volume_bytes.per_gpu", "bytes", C::always,
       [](R r) -> Cell { return r.result.volume.per_gpu; }},
      {"volume_intra_node_bytes", "volume_bytes.intra_node", "bytes", C::always,
       [](R r) -> Cell { return r.result.volume.intra_node; }},
      {"volume_inter_node_bytes", "volume_bytes.inter_node", "bytes", C::always,
       [](R r) -> Cell { return r.result.volume.inter_node; }},
      {"volume_total_bytes", "volume_bytes.total", "bytes", C::always,
       [](R r) -> Cell { return r.result.volume.total; }},
      {"peak_memory_bytes", "peak_memory_bytes", "bytes", C::always, [](R r) -> Cell { return r.result.memory.total; }},
      {"token_s", "token_s", "s", C::always, [](R r) -> Cell { return r.result.token_s; }},
      {"calibration", "calibration", "", C::always, [](R r) -> Cell { return std::string(to_string(r.calibration)); }},
      {"extrapolation", "extrapolation", "", C::always, [](R r) -> Cell { return r.extrapolation; }},
      {"impl", "impl", "", C::always, [](R r) -> Cell { return r.result.impl; }},
      {"latency_s_low", "latency_s_low", "s", C::always, [](R r) -> Cell { return r.latency_band.low_s; }},
      {"latency_s_high", "latency_s_high", "s", C::always, [](R r) -> Cell { return r.latency_band.high_s; }},
      {"host_s", "breakdown.host_s", "s", C::always, [](R r) -> Cell { return r.result.breakdown.host_s; }},
      {"tp", "tp", "GPUs", C::always, [](R r) -> Cell { return static_cast<long long>(r.layout.tp); }},
      {"cp", "cp", "GPUs", C::always, [](R r) -> Cell { return static_cast<long long>(r.layout.cp); }},
      {"replicas", "replicas", "", C::always, [](R r) -> Cell { return static_cast<long long>(r.layout.replicas); }},
      {"placement", "placement", "", C::always, [](R r) -> Cell { return std::string(model::to_string(r.placement)); }},
      {"attention_parallelism", "attention_parallelism", "", C::always,
       [](R r) -> Cell { return std::string(model::to_string(r.layout.attention)); }},
      {"cluster_nodes", "cluster_nodes", "nodes", C::always,
       [](R r) -> Cell { return static_cast<long long>(r.cluster_nodes); }},
      {"first_call_s", "first_call_s", "s", C::always, [](R r) -> Cell { return r.result.first_call_s; }},
      {"fits", "fits", "", C::always, [](R r) -> Cell { return r.memory_shortfall.empty() ? 1LL : 0LL; }},
      {"does_not_fit", "does_not_fit", "", C::always, [](R r) -> Cell { return r.memory_shortfall; }},
      {"scope", "scope", "", C::always,
       [](R r) -> Cell { return std::string(r.step ? model::to_string(r.step->scope) : "attention"); }},
      {"ep", "ep", "GPUs", C::always, [](R r) -> Cell { return static_cast<long long>(r.layout.experts.ep); }},
      {"prefill_s", "prefill_s", "s", C::prefill, [](R r) -> Cell { return optional_number(r.prefill_s); }},
      {"generation_s", "generation_s", "s", C::generation, [](R r) -> Cell { return optional_number(r.generation_s); }},
      {"generation_s_low", "generation_s_low", "s", C::generation,
       [](R r) -> Cell { return r.generation_band ? Cell(r.generation_band->low_s) : Cell(); }},
      {"generation_s_high", "generation_s_high", "s", C::generation,
       [](R r) -> Cell { return r.generation_band ? Cell(r.generation_band->high_s) : Cell(); }},
      {"model_latency_s", "model_latency_s", "s", C::model_latency,
       [](R r) -> Cell { return optional_number(r.model_latency_s); }},
      {"transfers_simulated", "transfers_simulated", "", C::transfers,
       [](R r) -> Cell { return r.transfers_simulated ? Cell(*r.transfers_simulated) : Cell(); }},
      {"layer_s", "layer_s", "s", C::step, [](R r) -> Cell { return step_of(r) ? Cell(r.step->layer_s) : Cell(); }},
      {"step_s", "step_s", "s", C::step, [](R r) -> Cell { return step_of(r) ? Cell(r.step->step_s) : Cell(); }},
      {"tokens_per_s", "tokens_per_s", "tokens/s", C::step,  // one layer makes no token: none for --scope layer
       [](R r) -> Cell {
         return step_of(r) && r.step->scope == model::Scope::step ? Cell(r.step->tokens_per_s) : Cell();
       }},
      {"weights_bytes", "step.memory_bytes.weights", "bytes", C::step,
       [](R r) -> Cell { return step_of(r) ? Cell(r.step->memory.weights) : Cell(); }},
      {"step_memory_bytes", "step.memory_bytes.total", "bytes", C::step,
       [](R r) -> Cell { return step_of(r) ? Cell(r.step->memory.total) : Cell(); }},
      {"max_seq_len", "step.max_seq_len", "tokens", C::step,
       [](R r) -> Cell { return step_of(r) ? Cell(r.step->memory.max_seq_len) : Cell(); }},
      {"max_batch", "step.max_batch", "sequences", C::step,
       [](R r) -> Cell { return step_of(r) ? Cell(r.step->memory.max_batch) : Cell(); }},
      {"ep_communication_s", "step.breakdown.ep_communication_s", "s", C::step,
       [](R r) -> Cell { return step_of(r) ? Cell(r.step->breakdown.ep_communication_s) : Cell(); }},
      {"tokens_per_s_per_gpu", "tokens_per_s_per_gpu", "tokens/s", C::step,
       [](R r) -> Cell {
         if (!step_of(r) || r.step->scope != model::Scope::step) return Cell();
         return Cell(r.step->tokens_per_s / (r.layout.tp * r.layout.cp));  // a replica's tokens over its GPUs
       }},
  };
}

}  // namespace

const std::vector<DecodeColumn>& decode_columns() {
  static const std::vector<DecodeColumn> columns = make_columns();
  return columns;
}

bool carries(const DecodeRow& row, Carried carried) {
  switch (carried) {
    case Carried::always: return true;
    case Carried::prefill: return row.prefill_s.has_value();
    case Carried::generation: return row.generation_s.has_value();
    case Carried::model_latency: return row.model_latency_s.has_value();
    case Carried::transfers: return row.transfers_simulated.has_value();
    case Carried::step: return row.step.has_value();
  }
  return false;
}

std::vector<const DecodeColumn*> columns_of(const DecodeRow& row) {
  std::vector<const DecodeColumn*> carried;
  for (const DecodeColumn& column : decode_columns()) {
    if (carries(row, column.carried)) carried.push_back(&column);
  }
  return carried;
}

void put_json(nlohmann::ordered_json& json, std::string_view path, const Cell& cell) {
  nlohmann::ordered_json* at = &json;
  for (std::size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
    at = &(*at)[std::string(path.substr(0, dot))];
    path.remove_prefix(dot + 1);
  }
  nlohmann::ordered_json& value = (*at)[std::string(path)];
  if (const auto* text = std::get_if<std::string>(&cell)) {
    value = *text;
  } else if (const auto* whole = std::get_if<long long>(&cell)) {
    value = *whole;
  } else if (const auto* number = std::get_if<double>(&cell); number && std::isfinite(*number)) {
    value = *number;
  } else {
    value = nullptr;
  }
}

const nlohmann::ordered_json* find_json(const nlohmann::ordered_json& json, std::string_view path) {
  const nlohmann::ordered_json* at = &json;
  for (;;) {
    const std::size_t dot = path.find('.');
    const std::string key(path.substr(0, dot));
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
    if (dot == std::string_view::npos) return at;
    path.remove_prefix(dot + 1);
  }
}

}  // namespace treering::analysis
