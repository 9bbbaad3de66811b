#include "decode_output.hpp"

#include "csv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "treering/topologies/units.hpp"

#include "treering/model/extrapolation.hpp"

namespace treering::cli {

using nlohmann::ordered_json;

namespace {

int nodes_used(const topologies::Topology& topology, const std::vector<int>& gpus) {
  std::vector<int> nodes;
  for (int gpu : gpus) nodes.push_back(topology.node_of_gpu(gpu));
  std::sort(nodes.begin(), nodes.end());
  return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

}  // namespace

void set_context(DecodeRow& row, const model::DecodeModel& decode, const model::DecodePlan& plan) {
  const model::Workload& workload = plan.workload;
  row.extrapolation = model::join_reasons(model::extrapolations(decode.topology(), plan));
  row.calibration = !decode.topology().spec().calibration ? "none" : row.extrapolation.empty() ? "inside" : "extrapolated";
  row.cluster = decode.topology().spec().name;
  row.cluster_nodes = decode.topology().node_count();
  row.nodes_used = nodes_used(decode.topology(), decode.group().gpus);
  row.workload = workload.name;
  row.batch = workload.batch;
  row.layout = {1, static_cast<int>(plan.gpus.size())};  // the K/V split over every GPU, until set_layout says otherwise
  const topologies::ImplProfile& profile = plan.impl_profile ? *plan.impl_profile : topologies::default_impl_profile();
  row.errors = model::prediction_errors(decode.topology(), profile, row.calibration == "extrapolated");
  row.latency_band = model::latency_band(row.result, row.errors);
}

void set_layout(DecodeRow& row, const model::LayoutGroups& groups, const topologies::Topology& topology) {
  row.layout = groups.layout;
  row.placement = model::to_string(groups.order);
  row.result.gpus = static_cast<int>(groups.gpus.size());
  row.nodes_used = nodes_used(topology, groups.gpus);
}

void set_generation_band(DecodeRow& row, int layers, long long tokens) {
  if (row.generation_s) row.generation_band = model::generation_band(row.result, layers, tokens, *row.generation_s, row.errors);
}

namespace {

// JSON has no infinity: an unbounded side is null.
ordered_json bound(double value_s) { return std::isfinite(value_s) ? ordered_json(value_s) : ordered_json(nullptr); }

}  // namespace

std::string errors_text(const model::RelativeErrors& errors) {
  char text[160];
  if (errors.network_latency != errors.communication) {
    std::snprintf(text, sizeof text, "compute +-%.1f %%, communication +-%.1f %% (across nodes at latency-bound sizes +-%.1f %%)",
                  100 * errors.compute, 100 * errors.communication, 100 * errors.network_latency);
  } else {
    std::snprintf(text, sizeof text, "compute +-%.1f %%, communication +-%.1f %%", 100 * errors.compute, 100 * errors.communication);
  }
  return text;
}

std::string errors_legend(const std::vector<model::RelativeErrors>& errors) {
  if (errors.empty()) return "";
  auto sum = [](const model::RelativeErrors& e) { return e.compute + e.communication + e.network_latency; };
  const model::RelativeErrors* least = &errors.front();
  bool differ = false;
  for (const model::RelativeErrors& e : errors) {
    differ = differ || sum(e) != sum(*least);
    if (sum(e) < sum(*least)) least = &e;
  }
  return errors_text(*least) + (differ ? "; twice that where extrapolated" : "");
}

std::string band_line(const std::vector<DecodeRow>& rows) {
  if (rows.empty()) return "";
  return "; band: " + errors_text(rows.front().errors) + " (" +
         (rows.front().calibration == "none" ? "the profile's validation" : "the calibration's residuals") + ")";
}

std::string format_band(const model::Band& band) {
  return topologies::format_duration(band.low_s) + " - " +
         (std::isfinite(band.high_s) ? topologies::format_duration(band.high_s) : std::string("unbounded"));
}

ordered_json decode_json(const DecodeRow& row) {
  const model::DecodeResult& r = row.result;
  ordered_json phases = ordered_json::array();
  for (const auto& phase : r.phases) {
    phases.push_back({{"label", phase.label}, {"time_s", phase.time_s}, {"inter_node", phase.inter_node}, {"how", phase.how}});
  }
  ordered_json json = {
      {"algo", model::to_string(r.algorithm)}, {"engine", row.engine}, {"cluster", row.cluster},
      {"nodes", row.nodes_used}, {"cluster_nodes", row.cluster_nodes},
      {"gpus", r.gpus}, {"tp", row.layout.tp}, {"cp", row.layout.cp}, {"placement", row.placement}, {"workload", row.workload}, {"batch", row.batch}, {"seq_len", r.seq_len},
      {"impl", r.impl}, {"latency_s", r.latency_s}, {"latency_s_low", bound(row.latency_band.low_s)},
      {"latency_s_high", bound(row.latency_band.high_s)},
      {"uncertainty", {{"compute", row.errors.compute}, {"communication", row.errors.communication},
                       {"network_latency", row.errors.network_latency}, {"source", row.errors.source}}},
      {"breakdown", {{"compute_s", r.breakdown.compute_s}, {"intra_node_s", r.breakdown.intra_node_s},
                     {"inter_node_s", r.breakdown.inter_node_s},
                     {"inter_node_latency_bound_s", r.breakdown.inter_node_latency_bound_s}, {"host_s", r.breakdown.host_s},
                     {"exposed_communication_s", r.breakdown.intra_node_s + r.breakdown.inter_node_s},
                     {"overlapped_communication_s", r.breakdown.overlapped_communication_s}}},
      {"volume_bytes", {{"per_gpu", r.volume.per_gpu}, {"intra_node", r.volume.intra_node},
                        {"inter_node", r.volume.inter_node}, {"total", r.volume.total}}},
      {"peak_memory_bytes", r.memory.total},
      {"memory_bytes", {{"kv_cache", r.memory.kv_cache}, {"receive_buffers", r.memory.receive_buffers},
                        {"partial_states", r.memory.partial_states}, {"workspace", r.memory.workspace},
                        {"weights", r.memory.weights}}},
      {"token_s", r.token_s}, {"first_call_s", r.first_call_s}, {"calibration", row.calibration},
      {"extrapolation", row.extrapolation}};
  if (row.prefill_s) json["prefill_s"] = *row.prefill_s;
  if (row.generation_s) json["generation_s"] = *row.generation_s;
  if (row.generation_band) {
    json["generation_s_low"] = bound(row.generation_band->low_s);
    json["generation_s_high"] = bound(row.generation_band->high_s);
  }
  if (row.model_latency_s) json["model_latency_s"] = *row.model_latency_s;
  if (row.step) {
    const model::StepResult& st = *row.step;
    const model::StepBreakdown& b = st.breakdown;
    const model::StepMemory& m = st.memory;
    json["scope"] = model::to_string(st.scope);
    json["layer_s"] = st.layer_s;
    json["step_s"] = st.step_s;
    json["tokens_per_s"] = st.scope == model::Scope::step ? ordered_json(st.tokens_per_s) : ordered_json(nullptr);
    json["step"] = {{"post_attention_gpus", st.post_attention_gpus}, {"tokens_per_gpu", st.tokens_per_gpu},
                    {"breakdown", {{"attention_s", b.attention_s}, {"projections_s", b.projections_s}, {"mlp_s", b.mlp_s},
                                   {"tp_communication_s", b.tp_communication_s}, {"other_s", b.other_s},
                                   {"lm_head_s", b.lm_head_s}}},
                    {"memory_bytes", {{"weights", m.weights}, {"kv_cache", m.kv_cache}, {"buffers", m.buffers},
                                      {"activations", m.activations}, {"total", m.total}, {"capacity", m.capacity},
                                      {"headroom", m.capacity - m.total}}},
                    {"max_seq_len", m.max_seq_len}};
  } else {
    json["scope"] = "attention";
  }
  if (row.transfers_simulated) json["transfers_simulated"] = *row.transfers_simulated;
  json["phases"] = phases;
  if (!row.links.is_null()) json["links"] = row.links;
  return json;
}

std::string calibration_line(const topologies::Topology& topology) {
  const auto& calibration = topology.spec().calibration;
  if (!calibration) return "calibration: none (nominal bandwidths x default efficiencies)";
  std::string inputs;
  for (const std::string& input : calibration->provenance.inputs) inputs += (inputs.empty() ? "" : ", ") + input;
  return "calibration: " + (inputs.empty() ? std::string("(inputs not named)") : inputs) +
         (calibration->provenance.date.empty() ? "" : " (" + calibration->provenance.date + ")") +
         "; rows marked OUTSIDE extrapolate beyond what it measured";
}

std::string calibration_marker(const DecodeRow& row) {
  return row.calibration == "none" ? "" : row.calibration == "inside" ? "inside" : "OUTSIDE *";
}

void print_extrapolation_notes(std::ostream& out, const std::vector<const DecodeRow*>& rows) {
  for (const DecodeRow* row : rows) {
    if (row->extrapolation.empty()) continue;
    out << "* " << model::to_string(row->result.algorithm) << " at " << row->result.seq_len << " tokens: " << row->extrapolation << '\n';
  }
}

std::string decode_csv_header(const DecodeRow& first) {
  return std::string("algo,engine,cluster,nodes,gpus,workload,batch,seq_len,latency_s,compute_s,intra_node_s,inter_node_s,"
                     "overlapped_communication_s,volume_per_gpu_bytes,volume_intra_node_bytes,volume_inter_node_bytes,"
                     "volume_total_bytes,peak_memory_bytes,token_s,calibration,extrapolation,impl,latency_s_low,latency_s_high,"
                     "host_s,tp,cp") +
         (first.prefill_s ? ",prefill_s" : "") + (first.generation_s ? ",generation_s" : "") +
         (first.model_latency_s ? ",model_latency_s" : "") +
         (first.step ? ",scope,layer_s,step_s,tokens_per_s,weights_bytes,step_memory_bytes,max_seq_len" : "") + '\n';
}

std::string decode_csv_line(const DecodeRow& row, const DecodeRow& first) {
  const model::DecodeResult& r = row.result;
  CsvRecord record;
  record.text(model::to_string(r.algorithm)).text(row.engine).text(row.cluster).integer(row.nodes_used).integer(r.gpus);
  record.text(row.workload).integer(row.batch).integer(r.seq_len).number(r.latency_s);
  record.number(r.breakdown.compute_s).number(r.breakdown.intra_node_s).number(r.breakdown.inter_node_s);
  record.number(r.breakdown.overlapped_communication_s).number(r.volume.per_gpu).number(r.volume.intra_node);
  record.number(r.volume.inter_node).number(r.volume.total).number(r.memory.total).number(r.token_s).text(row.calibration);
  record.text(row.extrapolation).text(r.impl).number(row.latency_band.low_s).number(row.latency_band.high_s);
  record.number(r.breakdown.host_s).integer(row.layout.tp).integer(row.layout.cp);
  if (first.prefill_s) record.number(row.prefill_s.value_or(0));
  if (first.generation_s) record.number(row.generation_s.value_or(0));
  if (first.model_latency_s) record.number(row.model_latency_s.value_or(0));
  if (first.step) {
    const model::StepResult st = row.step.value_or(model::StepResult{});
    record.text(model::to_string(st.scope)).number(st.layer_s).number(st.step_s);
    if (st.scope == model::Scope::step) {
      record.number(st.tokens_per_s);
    } else {
      record.empty();  // one layer makes no token
    }
    record.number(st.memory.weights).number(st.memory.total).number(st.memory.max_seq_len);
  }
  return record.line();
}

void print_decode_csv(std::ostream& out, const std::vector<DecodeRow>& rows) {
  const DecodeRow first = rows.empty() ? DecodeRow{} : rows.front();
  out << decode_csv_header(first);
  for (const DecodeRow& row : rows) out << decode_csv_line(row, first);
}

}  // namespace treering::cli
