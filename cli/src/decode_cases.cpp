#include "decode_cases.hpp"

#include <algorithm>
#include <stdexcept>

#include "treering/model/step.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {

model::LayoutGroups layout_groups(const LayoutChoice& layout, const topologies::Topology& topology, const std::vector<int>& gpus) {
  const int available = gpus.empty() ? topology.gpu_count() : static_cast<int>(gpus.size());
  model::Layout counts{layout.tp.value_or(1), layout.cp.value_or(1)};
  auto rest = [&](int given, const char* option) {
    if (available % given != 0) {
      throw std::invalid_argument(std::string(option) + " " + std::to_string(given) + " does not divide the " +
                                  std::to_string(available) + " GPUs (give both --tp and --cp, or --gpus)");
    }
    return available / given;
  };
  if (layout.tp && !layout.cp) counts.cp = rest(*layout.tp, "--tp");
  if (layout.cp && !layout.tp) counts.tp = rest(*layout.cp, "--cp");
  if (!layout.tp && !layout.cp) counts.cp = available;
  return model::place_layout(topology, counts, gpus, model::parse_layout_order(layout.placement), layout.tp_in_domain);
}

void add_step(const LayoutChoice& layout, const model::LayoutModel& layouts, const model::Workload& workload,
              int slowest_group, DecodeRow& row) {
  const model::Scope scope = model::parse_scope(layout.scope);
  if (scope == model::Scope::attention) return;
  const model::LayoutAttention attention{row.result, row.result.volume, slowest_group};
  row.step = model::evaluate_step(layouts, attention, row.result.algorithm, workload, row.result.seq_len, scope);
  const model::StepMemory& m = row.step->memory;
  if (m.total > m.capacity) {
    namespace units = treering::topologies;
    throw std::invalid_argument(std::string(model::to_string(row.result.algorithm)) + " at " + std::to_string(row.result.seq_len) +
                                " tokens, tp " + std::to_string(row.layout.tp) + " x cp " + std::to_string(row.layout.cp) +
                                ", batch " + std::to_string(workload.batch) + " does not fit: it needs " +
                                units::format_bytes(m.total) + " per GPU (weights " + units::format_bytes(m.weights) +
                                ", KV cache " + units::format_bytes(m.kv_cache) + "), a GPU has " +
                                units::format_bytes(m.capacity) + "; the longest context that fits is " +
                                std::to_string(m.max_seq_len) + " tokens");
  }
}

DecodeRow predict_row(const LayoutChoice& layout, const GenerationChoice& generation, const model::LayoutModel& layouts,
                      const model::Workload& workload, long long seq_len, model::DecodeAlgorithm algorithm,
                      const model::PlanOptions& options, bool check_memory) {
  const model::LayoutAttention attention = layouts.attention(algorithm, workload, seq_len, options);
  const model::DecodeModel& decode = layouts.cp_model(attention.slowest_group);
  const model::Workload slice = model::head_slice(workload, layouts.groups().layout.tp);
  DecodeRow row;
  row.result = attention.slowest;
  row.result.volume = attention.volume;
  set_context(row, decode, layouts.plan(attention.slowest_group, algorithm, workload, seq_len, options));
  set_layout(row, layouts.groups(), layouts.topology());
  row.workload = workload.name;
  add_step(layout, layouts, workload, attention.slowest_group, row);
  if (!row.step && check_memory) model::check_fits(row.result, decode);
  if (generation.prefill || generation.tokens) row.prefill_s = generation.prefill ? decode.prefill_s(slice, seq_len, options) : 0.0;
  if (generation.tokens) {
    const long long tokens = *generation.tokens;
    row.generation_s = *row.prefill_s + decode.generation_s(algorithm, slice, seq_len, tokens, options);
    set_generation_band(row, workload.layers, tokens);
    if (check_memory) model::check_fits(decode.predict(algorithm, slice, seq_len + tokens - 1, options), decode);  // the last token
  }
  if (!generation.prefill) row.prefill_s.reset();
  return row;
}

namespace {

SimulatedCase simulate_case(const ReplayChoice& replay, const model::DecodeModel& decode, const model::Workload& workload,
                            model::DecodeAlgorithm algorithm, long long seq_len, const model::PlanOptions& options,
                            bool check_memory) {
  SimulatedCase c = simulate_decode(decode, workload, algorithm, seq_len,
                                    {replay.record_activities, !replay.full_ring, replay.degradation, replay.in_simgrid},
                                    check_memory, options);
  if (!replay.degradation.empty()) {
    c.healthy_s = sim::replay_plan(decode, c.plan, {false, !replay.full_ring, {}, replay.in_simgrid}).latency_s;
  }
  return c;
}

// tokens: the simulated token time at both ends of the generation, by the trapezoid rule (as the model).
void add_generation(const GenerationChoice& generation, const ReplayChoice& replay, const model::DecodeModel& decode,
                    const model::Workload& workload, const model::PlanOptions& options, bool check_memory, SimulatedCase& c) {
  if (generation.prefill || generation.tokens) c.row.prefill_s = generation.prefill ? decode.prefill_s(workload, c.plan.seq_len, options) : 0.0;
  if (generation.tokens) {
    const long long tokens = *generation.tokens;
    const SimulatedCase end =
        simulate_case(replay, decode, workload, c.plan.algorithm, c.plan.seq_len + tokens - 1, options, check_memory);
    c.row.generation_s = *c.row.prefill_s + model::generation_from_ends_s(tokens, c.row.result.token_s, end.row.result.token_s,
                                                                          c.row.result.first_call_s);
    set_generation_band(c.row, workload.layers, tokens);
  }
  if (!generation.prefill) c.row.prefill_s.reset();
}

}  // namespace

SimulatedCase simulate_row(const LayoutChoice& layout, const GenerationChoice& generation, const ReplayChoice& replay,
                           const model::LayoutModel& layouts, const model::Workload& workload, long long seq_len,
                           model::DecodeAlgorithm algorithm, const model::PlanOptions& options, bool check_memory) {
  const model::Workload slice = model::head_slice(workload, layouts.groups().layout.tp);
  std::optional<SimulatedCase> slowest;
  int slowest_group = 0;
  model::DecodeVolume volume;
  for (int t = 0; t < layouts.groups().layout.tp; ++t) {
    SimulatedCase c = simulate_case(replay, layouts.cp_model(t), slice, algorithm, seq_len, options, check_memory);
    add_generation(generation, replay, layouts.cp_model(t), slice, options, check_memory, c);
    volume.per_gpu = std::max(volume.per_gpu, c.row.result.volume.per_gpu);
    volume.intra_node += c.row.result.volume.intra_node;
    volume.inter_node += c.row.result.volume.inter_node;
    volume.total += c.row.result.volume.total;
    if (!slowest || c.row.result.latency_s > slowest->row.result.latency_s) slowest = std::move(c), slowest_group = t;
  }
  slowest->row.result.volume = volume;
  set_layout(slowest->row, layouts.groups(), layouts.topology());
  slowest->row.workload = workload.name;
  add_step(layout, layouts, workload, slowest_group, slowest->row);
  return std::move(*slowest);
}

}  // namespace treering::cli
