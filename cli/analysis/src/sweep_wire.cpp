#include "treering/analysis/sweep_wire.hpp"

#include <stdexcept>
#include <vector>

// The row's types as JSON objects, field by field (nlohmann's macros: a named key per field, so a key missing at
// the reading end is an error, not a shifted field), sent as CBOR: its doubles keep their bits (float64, or
// float32 where that is exact; infinities and NaN as CBOR's half-precision constants, -0 keeps its sign), where
// JSON text would turn an infinity into null.

namespace nlohmann {

// An optional as its value, or null (nlohmann 3.11 has no std::optional of its own).
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value) {
      j = *value;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null()) {
      value.reset();
    } else {
      value = j.get<T>();
    }
  }
};

}  // namespace nlohmann

namespace treering::model {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecodeBreakdown, compute_s, intra_node_s, inter_node_s, inter_node_latency_bound_s,
                                   overlapped_communication_s, host_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecodeVolume, per_gpu, intra_node, inter_node, total)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecodeMemory, kv_cache, receive_buffers, partial_states, workspace, weights, total)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PhaseTime, label, time_s, inter_node, how)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecodeResult, algorithm, seq_len, gpus, domains, impl, latency_s, breakdown, volume,
                                   memory, weights_s, token_s, first_call_s, phases)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RelativeErrors, compute, communication, network_latency, source, host_staged)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Band, low_s, high_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ExpertLayout, ep, kernel, redundant_experts, skew, micro_batches, dispatch_dtype,
                                   combine_dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Layout, tp, cp, replicas, attention, experts)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepBreakdown, attention_s, projections_s, mlp_s, tp_communication_s,
                                   tp_network_latency_s, other_s, lm_head_s, ep_communication_s, overlapped_s, engine_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ExpertRouting, ep, nodes, group_limited, experts_per_gpu, copies_per_token,
                                   gpu_probability, node_probability, gpus_per_token, nodes_per_token, tokens_per_gpu,
                                   mean_copies_received, busiest_tokens_received, busiest_copies_received,
                                   busiest_factor, busiest_experts_touched)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MoeExchange, op, kernel, dtype, routing, message_bytes, messages_per_gpu,
                                   nic_bytes_per_gpu, nvlink_bytes_per_gpu, busiest_bytes, nic_Bps, nvlink_Bps,
                                   latency_s, transfer_s, time_s, bound)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ExpertStep, dispatch, combine, tokens_per_gpu, micro_batches, moe_layers,
                                   hidden_collectives, compute_s, exchange_s, experts_mlp_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepPartBytes, attention, projections, mlp, other, lm_head)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepMemory, weights, kv_cache, buffers, activations, total, capacity, max_seq_len,
                                   max_batch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepCollectives, hidden_allreduce_bytes, hidden_allreduces, logits_allgather_bytes,
                                   attention_output_op, mlp_output_op)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepResult, scope, layer_s, step_s, tokens_per_s, post_attention_gpus,
                                   tokens_per_gpu, breakdown, part_bytes, calibrated_parts, memory, collectives,
                                   dense_layers, dense_mlp_s, dense_layer_s, experts)

}  // namespace treering::model

namespace treering::analysis {
namespace {

// The simulator's per-link figures are an ordered_json of their own: carried as its CBOR bytes, order kept.
struct Links {
  nlohmann::ordered_json value;
};
void to_json(nlohmann::json& j, const Links& links) {
  j = nlohmann::json::binary(nlohmann::ordered_json::to_cbor(links.value));
}
void from_json(const nlohmann::json& j, Links& links) {
  links.value = nlohmann::ordered_json::from_cbor(j.get_binary());
}

nlohmann::json row_json(const DecodeRow& row) {
  return {{"result", row.result},
          {"engine", validate::to_string(row.engine)},
          {"cluster", row.cluster},
          {"cluster_nodes", row.cluster_nodes},
          {"nodes_used", row.nodes_used},
          {"workload", row.workload},
          {"batch", row.batch},
          {"prefill_s", row.prefill_s},
          {"generation_s", row.generation_s},
          {"model_latency_s", row.model_latency_s},
          {"transfers_simulated", row.transfers_simulated},
          {"links", Links{row.links}},
          {"calibration", row.calibration},
          {"extrapolation", row.extrapolation},
          {"errors", row.errors},
          {"latency_band", row.latency_band},
          {"generation_band", row.generation_band},
          {"layout", row.layout},
          {"placement", model::to_string(row.placement)},
          {"step", row.step},
          {"memory_shortfall", row.memory_shortfall}};
}

DecodeRow row_of(const nlohmann::json& j) {
  DecodeRow row;
  j.at("result").get_to(row.result);
  row.engine = validate::parse_engine(j.at("engine").get<std::string>());
  j.at("cluster").get_to(row.cluster);
  j.at("cluster_nodes").get_to(row.cluster_nodes);
  j.at("nodes_used").get_to(row.nodes_used);
  j.at("workload").get_to(row.workload);
  j.at("batch").get_to(row.batch);
  j.at("prefill_s").get_to(row.prefill_s);
  j.at("generation_s").get_to(row.generation_s);
  j.at("model_latency_s").get_to(row.model_latency_s);
  j.at("transfers_simulated").get_to(row.transfers_simulated);
  row.links = j.at("links").get<Links>().value;
  j.at("calibration").get_to(row.calibration);
  j.at("extrapolation").get_to(row.extrapolation);
  j.at("errors").get_to(row.errors);
  j.at("latency_band").get_to(row.latency_band);
  j.at("generation_band").get_to(row.generation_band);
  j.at("layout").get_to(row.layout);
  row.placement = model::parse_layout_order(j.at("placement").get<std::string>());
  j.at("step").get_to(row.step);
  j.at("memory_shortfall").get_to(row.memory_shortfall);
  return row;
}

}  // namespace

std::string encode_row(const DecodeRow& row) {
  const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(row_json(row));
  return {cbor.begin(), cbor.end()};
}

DecodeRow decode_row(const std::string& bytes) {
  try {
    return row_of(nlohmann::json::from_cbor(bytes));  // strict: bytes after the row are an error too
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(std::string("a sweep row that is not one encode_row wrote: ") + error.what());
  }
}

}  // namespace treering::analysis
