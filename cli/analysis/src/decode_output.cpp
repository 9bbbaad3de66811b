#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/moe_report.hpp"

#include "treering/analysis/csv.hpp"
#include "treering/analysis/decode_columns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "treering/topologies/units.hpp"

#include "treering/model/extrapolation.hpp"

namespace treering::analysis {

const char* to_string(CalibrationState state) {
  switch (state) {
    case CalibrationState::none: return "none";
    case CalibrationState::inside: return "inside";
    case CalibrationState::extrapolated: return "extrapolated";
  }
  return "none";
}

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
  const model::ExtrapolationParts parts = model::extrapolation_parts(decode.topology(), plan);
  std::vector<std::string> reasons = parts.compute;
  reasons.insert(reasons.end(), parts.communication.begin(), parts.communication.end());
  row.extrapolation = model::join_reasons(reasons);
  row.calibration = !decode.topology().spec().calibration ? CalibrationState::none
                    : row.extrapolation.empty()           ? CalibrationState::inside
                                                          : CalibrationState::extrapolated;
  row.cluster = decode.topology().spec().name;
  row.cluster_nodes = decode.topology().node_count();
  row.nodes_used = nodes_used(decode.topology(), decode.group().gpus);
  row.workload = workload.name;
  row.batch = workload.batch;
  row.layout = {1,
                static_cast<int>(plan.gpus.size())};  // the K/V split over every GPU, until set_layout says otherwise
  const topologies::ImplProfile& profile = plan.costs.profile_or_default();
  // Each part's band from what the calibration measured of it: communication inside it at its residuals there.
  row.errors = model::prediction_errors(decode.topology(), profile,
                                        {!parts.compute.empty(), !parts.communication.empty(), parts.collective_bytes});
  row.latency_band = model::latency_band(row.result, row.errors);
}

void set_layout(DecodeRow& row, const model::LayoutGroups& groups, const topologies::Topology& topology) {
  row.layout = groups.layout;
  row.placement = groups.order;
  row.result.gpus = static_cast<int>(groups.gpus.size());
  row.nodes_used = nodes_used(topology, groups.gpus);
}

void set_generation_band(DecodeRow& row, int layers, long long tokens) {
  if (row.generation_s)
    row.generation_band = model::generation_band(row.result, layers, tokens, *row.generation_s, row.errors);
}

std::string errors_text(const model::RelativeErrors& errors) {
  char text[160];
  if (errors.network_latency != errors.communication) {
    std::snprintf(text, sizeof text,
                  "compute +-%.1f %%, communication +-%.1f %% (across nodes at latency-bound sizes +-%.1f %%)",
                  100 * errors.compute, 100 * errors.communication, 100 * errors.network_latency);
  } else {
    std::snprintf(text, sizeof text, "compute +-%.1f %%, communication +-%.1f %%", 100 * errors.compute,
                  100 * errors.communication);
  }
  // Why communication is so wide: an uncalibrated box whose GPUs meet in host memory (model::kHostStagedError).
  return std::string(text) + (errors.host_staged ? " (GPUs meet in host memory: public runs of such boxes)" : "");
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
  const bool calibrated = rows.front().calibration != CalibrationState::none;
  std::string text = "; band: " + errors_text(rows.front().errors) + " (" +
                     (calibrated ? "the calibration's residuals" : "the profile's validation") + ")";
  // Calibrated, each row's band comes from the residuals at the sizes it uses (doubled where it extrapolates).
  double least = 1e300, most = 0;
  for (const DecodeRow& row : rows)
    least = std::min(least, row.errors.communication), most = std::max(most, row.errors.communication);
  if (!calibrated || least == most) return text;
  char range[160];
  std::snprintf(
      range, sizeof range,
      "; band: communication +-%.1f %% to +-%.1f %% by row (the calibration's residuals at the sizes each uses, "
      "doubled where it extrapolates), compute +-%.1f %%",
      100 * least, 100 * most, 100 * rows.front().errors.compute);
  return range;
}

std::string format_band(const model::Band& band) {
  return topologies::format_duration(band.low_s) + " - " +
         (std::isfinite(band.high_s) ? topologies::format_duration(band.high_s) : std::string("unbounded"));
}

ordered_json decode_json(const DecodeRow& row) {
  const model::DecodeResult& r = row.result;
  ordered_json json = ordered_json::object();
  for (const DecodeColumn* column : columns_of(row)) put_json(json, column->json_path, column->cell(row));
  // What only JSON has: the errors behind the band, the rest of the breakdown and memory, the phases, the links.
  json["uncertainty"] = {{"compute", row.errors.compute},
                         {"communication", row.errors.communication},
                         {"network_latency", row.errors.network_latency},
                         {"source", row.errors.source}};
  json["breakdown"]["inter_node_latency_bound_s"] = r.breakdown.inter_node_latency_bound_s;
  json["breakdown"]["exposed_communication_s"] = r.breakdown.intra_node_s + r.breakdown.inter_node_s;
  json["memory_bytes"] = {{"kv_cache", r.memory.kv_cache},
                          {"receive_buffers", r.memory.receive_buffers},
                          {"partial_states", r.memory.partial_states},
                          {"workspace", r.memory.workspace},
                          {"weights", r.memory.weights}};
  if (row.step) {
    const model::StepResult& st = *row.step;
    const model::StepBreakdown& b = st.breakdown;
    const model::StepMemory& m = st.memory;
    ordered_json& step = json["step"];
    step["post_attention_gpus"] = st.post_attention_gpus;
    step["tokens_per_gpu"] = st.tokens_per_gpu;
    step["breakdown"] = {{"attention_s", b.attention_s},
                         {"projections_s", b.projections_s},
                         {"mlp_s", b.mlp_s},
                         {"tp_communication_s", b.tp_communication_s},
                         {"other_s", b.other_s},
                         {"lm_head_s", b.lm_head_s},
                         {"ep_communication_s", b.ep_communication_s},
                         {"overlapped_s", b.overlapped_s},
                         {"engine_s", b.engine_s}};
    if (st.experts) step["experts"] = expert_step_json(*st.experts);
    ordered_json& memory = step["memory_bytes"];
    memory["kv_cache"] = m.kv_cache;
    memory["buffers"] = m.buffers;
    memory["activations"] = m.activations;
    memory["capacity"] = m.capacity;
    memory["headroom"] = m.capacity - m.total;
  }
  ordered_json phases = ordered_json::array();
  for (const auto& phase : r.phases) {
    phases.push_back(
        {{"label", phase.label}, {"time_s", phase.time_s}, {"inter_node", phase.inter_node}, {"how", phase.how}});
  }
  json["phases"] = phases;
  if (!row.links.is_null()) json["links"] = row.links;
  return json;
}

std::string calibration_line(const topologies::Topology& topology) {
  const auto& calibration = topology.spec().calibration;
  // SHARP's costs are NCCL's tuning constants: no public measurement was found to check them against.
  std::string notes =
      topology.spec().network.in_network_reduction
          ? "\nin-network reduction (SHARP): NCCL's CollNet and NVLS constants, not checked against a measurement"
          : "";
  // Across domains the collective costs take NCCL's constants for the cluster's GPUs and hosts: say which were assumed.
  const model::NcclRows rows = model::nccl_rows_of(topology.spec());
  if (topology.domain_count() > 1 && (rows.gpu_assumed || rows.host_assumed)) {
    notes += "\nNCCL " + topologies::to_string(topology.spec().nccl_version) + " constants for " +
             model::describe(rows, topology.spec().nccl_version);
  }
  if (!calibration) return "calibration: none (nominal bandwidths x default efficiencies)" + notes;
  std::string inputs;
  for (const std::string& input : calibration->provenance.inputs) inputs += (inputs.empty() ? "" : ", ") + input;
  return "calibration: " + (inputs.empty() ? std::string("(inputs not named)") : inputs) +
         (calibration->provenance.date.empty() ? "" : " (" + calibration->provenance.date + ")") +
         "; rows marked OUTSIDE extrapolate beyond what it measured" + notes;
}

std::string calibration_marker(const DecodeRow& row) {
  switch (row.calibration) {
    case CalibrationState::none: return "";
    case CalibrationState::inside: return "inside";
    case CalibrationState::extrapolated: return "OUTSIDE *";
  }
  return "";
}

void print_extrapolation_notes(std::ostream& out, const std::vector<const DecodeRow*>& rows) {
  std::vector<std::string> told;  // each distinct expert line once
  for (const DecodeRow* row : rows) {
    const std::string line = row->step ? expert_step_line(*row->step) : "";
    if (line.empty() || std::find(told.begin(), told.end(), line) != told.end()) continue;
    told.push_back(line);
    out << line << '\n';
  }
  for (const DecodeRow* row : rows) {
    if (row->extrapolation.empty()) continue;
    out << "* " << model::to_string(row->result.algorithm) << " at " << row->result.seq_len
        << " tokens: " << row->extrapolation << '\n';
  }
  print_memory_notes(out, rows);
}

void print_memory_notes(std::ostream& out, const std::vector<const DecodeRow*>& rows) {
  for (const DecodeRow* row : rows) {
    if (row->memory_shortfall.empty()) continue;
    out << "! " << model::to_string(row->result.algorithm) << " at " << row->result.seq_len << " tokens on "
        << row->result.gpus << " GPUs, batch " << row->batch << " does not fit: it " << row->memory_shortfall << '\n';
  }
}

bool any_does_not_fit(const std::vector<const DecodeRow*>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const DecodeRow* row) { return !row->memory_shortfall.empty(); });
}

std::string decode_csv_header(const DecodeRow& first) {
  std::string header;
  for (const DecodeColumn* column : columns_of(first)) {
    if (!header.empty()) header += ',';
    header += column->name;
  }
  return header + '\n';
}

std::string decode_csv_line(const DecodeRow& row, const DecodeRow& first) {
  CsvRecord record;
  for (const DecodeColumn* column : columns_of(first)) {
    const Cell cell = column->cell(row);
    if (const auto* text = std::get_if<std::string>(&cell)) {
      record.text(*text);
    } else if (const auto* whole = std::get_if<long long>(&cell)) {
      record.integer(*whole);
    } else if (const auto* number = std::get_if<double>(&cell)) {
      record.number(*number);
    } else {
      record.empty();
    }
  }
  return record.line();
}

void print_decode_csv(std::ostream& out, const std::vector<DecodeRow>& rows) {
  const DecodeRow first = rows.empty() ? DecodeRow{} : rows.front();
  out << decode_csv_header(first);
  for (const DecodeRow& row : rows) out << decode_csv_line(row, first);
}

}  // namespace treering::analysis
