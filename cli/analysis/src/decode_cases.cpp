#include "treering/analysis/decode_cases.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "treering/model/step.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::analysis {

namespace {

// --replicas: a whole number from 1, or "all" (`fit`: as many as the GPUs hold, at least 1).
int replica_count(const std::string& text, int fit) {
  if (text == "all") return std::max(1, fit);
  int count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc() || end != text.data() + text.size() || count < 1) {
    throw topologies::InputError("--replicas " + text + ": a whole number from 1, or all");
  }
  return count;
}

}  // namespace

namespace {

// --dcp N and --dp-attention: the engine's TP group (--tp, default: every GPU) with its attention split otherwise.
model::Layout engine_attention_layout(const LayoutChoice& layout, int available) {
  if (layout.dcp && layout.dp_attention)
    throw topologies::InputError("--dcp and --dp-attention are two ways to run the attention: give one");
  if (layout.cp && *layout.cp > 1)
    throw topologies::InputError(std::string(layout.dcp ? "--dcp" : "--dp-attention") +
                                 " splits the attention inside the TP group: leave out --cp");
  const int tp = layout.tp.value_or(available);
  if (layout.dp_attention) return {tp, 1, 1, model::AttentionParallelism::data};
  const int dcp = *layout.dcp;
  if (dcp < 1 || tp % dcp != 0) {
    throw topologies::InputError("--dcp " + std::to_string(dcp) + " must divide --tp " + std::to_string(tp) +
                                 " (the ranks that split the tokens are part of the TP group)");
  }
  return {tp / dcp, dcp, 1, model::AttentionParallelism::decode_context};
}

}  // namespace

namespace {

// --ep N: the experts over N GPUs, every GPU of the layout: the replicas fill what tp x cp leaves of them.
model::LayoutGroups place_with_experts(const LayoutChoice& layout, const topologies::Topology& topology,
                                       const std::vector<int>& gpus, model::Layout counts) {
  if (layout.ep) {
    const int ep = *layout.ep;
    if (ep < 1) throw topologies::InputError("--ep must be at least 1");
    if (ep % counts.gpus() != 0)
      throw topologies::InputError("--ep " + std::to_string(ep) + " is not a multiple of the " +
                                   std::to_string(counts.gpus()) + " GPUs of " + model::layout_name(counts) +
                                   ": the experts spread over every GPU that serves");
    if (layout.replicas == "1") counts.replicas = ep / counts.gpus();
    counts.experts = layout.experts;
    counts.experts.ep = ep;
  }
  return model::place_layout(topology, counts, gpus, layout.placement, layout.tp_in_domain);
}

}  // namespace

model::LayoutGroups layout_groups(const LayoutChoice& layout, const topologies::Topology& topology,
                                  const std::vector<int>& gpus) {
  const int available = gpus.empty() ? topology.gpu_count() : static_cast<int>(gpus.size());
  const int unplaced = layout.ep ? *layout.ep : available;  // what tp and cp default to filling
  if (layout.dcp || layout.dp_attention) {
    model::Layout counts = engine_attention_layout(layout, unplaced);
    counts.replicas = replica_count(layout.replicas, available / counts.gpus());
    return place_with_experts(layout, topology, gpus, counts);
  }
  model::Layout counts{layout.tp.value_or(1), layout.cp.value_or(1)};
  auto rest = [&](int given, const char* option) {
    if (available % given != 0) {
      throw topologies::InputError(std::string(option) + " " + std::to_string(given) + " does not divide the " +
                                   std::to_string(available) + " GPUs (give both --tp and --cp, or --gpus)");
    }
    return available / given;
  };
  if (layout.ep) {  // the attention's layout as given (tp 1 x cp 1 by default), replicas to the EP size
    counts.replicas = replica_count(layout.replicas, 1);
    return place_with_experts(layout, topology, gpus, counts);
  }
  if (layout.tp && !layout.cp) counts.cp = rest(*layout.tp, "--tp");
  if (layout.cp && !layout.tp) counts.tp = rest(*layout.cp, "--cp");
  if (!layout.tp && !layout.cp) counts.cp = available;
  counts.replicas = replica_count(layout.replicas, available / counts.gpus());
  return model::place_layout(topology, counts, gpus, layout.placement, layout.tp_in_domain);
}

void add_step(const LayoutChoice& layout, const model::LayoutModel& layouts, const model::Workload& workload,
              const model::LayoutAttention& predicted, DecodeRow& row) {
  const model::Scope scope = layout.scope;
  if (scope == model::Scope::attention) return;
  model::LayoutAttention attention = predicted;  // the row's attention (its volume over every CP group)
  attention.slowest = row.result;
  attention.volume = row.result.volume;
  row.step = model::evaluate_step(layouts, attention, row.result.algorithm, workload, row.result.seq_len, scope);
  const model::StepMemory& m = row.step->memory;
  if (m.total > m.capacity) {
    namespace units = treering::topologies;
    row.memory_shortfall = "needs " + units::format_bytes(m.total) + " per GPU (weights " +
                           units::format_bytes(m.weights) + ", KV cache " + units::format_bytes(m.kv_cache) +
                           "), a GPU has " + units::format_bytes(m.capacity) + "; the longest context that fits is " +
                           std::to_string(m.max_seq_len) + " tokens";
  }
}

// With check_memory (Python's check_memory=True), a row that does not fit is an error instead of a mark.
static void refuse_unless_fits(const DecodeRow& row, const model::Workload& workload, bool check_memory) {
  if (!check_memory || row.memory_shortfall.empty()) return;
  throw topologies::InputError(std::string(model::to_string(row.result.algorithm)) + " at " +
                               std::to_string(row.result.seq_len) + " tokens, " + model::layout_name(row.layout) +
                               ", batch " + std::to_string(workload.batch) + " does not fit: it " +
                               row.memory_shortfall);
}

DecodeRow predict_row(const LayoutChoice& layout, const GenerationChoice& generation, const model::LayoutModel& layouts,
                      const model::Workload& workload, long long seq_len, model::DecodeAlgorithm algorithm,
                      const model::PlanOptions& options, bool check_memory) {
  const model::LayoutAttention attention = layouts.attention(algorithm, workload, seq_len, options);
  const model::DecodeModel& decode = layouts.cp_model(attention.slowest_group);
  const model::Workload slice = model::attention_slice(workload, layouts.groups().layout, attention.slowest_group);
  DecodeRow row;
  row.result = attention.slowest;
  row.result.volume = attention.volume;
  set_context(row, decode, layouts.plan(attention.slowest_group, algorithm, workload, seq_len, options));
  set_layout(row, layouts.groups(), layouts.topology());
  row.workload = workload.name;
  add_step(layout, layouts, workload, attention, row);
  if (!row.step) row.memory_shortfall = model::memory_shortfall(row.result, decode);
  if (generation.prefill || generation.tokens)
    row.prefill_s = generation.prefill ? decode.prefill_s(slice, seq_len, options) : 0.0;
  if (generation.tokens) {
    const long long tokens = *generation.tokens;
    row.generation_s = *row.prefill_s + decode.generation_s(algorithm, slice, seq_len, tokens, options);
    set_generation_band(row, workload.layers, tokens);
    if (row.memory_shortfall.empty()) {  // the last token's context is the longest
      const std::string last =
          model::memory_shortfall(decode.predict(algorithm, slice, seq_len + tokens - 1, options), decode);
      if (!last.empty()) row.memory_shortfall = "at its last token " + last;
    }
  }
  if (!generation.prefill) row.prefill_s.reset();
  refuse_unless_fits(row, workload, check_memory);
  return row;
}

namespace {

sim::ReplayOptions replay_options(const ReplayChoice& replay, bool degraded = true) {
  sim::ReplayOptions options{replay.record_activities, !replay.full_ring,
                             degraded ? replay.degradation : sim::Degradation{}, replay.in_simgrid};
  options.one_of_identical = !replay.every_group;
  options.progress = replay.progress;
  return options;
}

// The model's layer or step around the simulated attention: the parts' times are the model's, the attention,
// the TP communication (with whatever waited for the slowest CP group), the layer and the step the replay's.
void add_simulated_step(const model::StepResult& predicted, const sim::LayoutReplay& replay,
                        const model::Workload& workload, DecodeRow& row) {
  model::StepResult step = predicted;
  const bool whole = step.scope == model::Scope::step;
  const double layers = whole ? workload.layers : 1.0;
  step.breakdown.attention_s = layers * (replay.attention_s - row.result.first_call_s);
  step.breakdown.tp_communication_s = replay.tp_communication_s;
  step.layer_s = *replay.layer_s;
  step.step_s = whole ? *replay.step_s : *replay.layer_s;
  step.tokens_per_s = whole ? workload.batch / step.step_s : 0.0;
  if (step.experts && replay.dispatch && replay.combine) {  // the exchanges as replayed
    model::ExpertStep& e = *step.experts;
    e.dispatch.time_s = replay.dispatch->time_s;
    e.combine.time_s = replay.combine->time_s;
    e.exchange_s = e.dispatch.time_s + e.combine.time_s;
    const double moe = whole ? e.moe_layers : 1.0;
    step.breakdown.ep_communication_s = moe * e.micro_batches * e.exchange_s;
    step.breakdown.overlapped_s =
        e.micro_batches > 1 ? moe * e.micro_batches * std::min(e.compute_s, e.exchange_s) : 0.0;
  }
  row.step = step;
}

// tokens: the simulated token time at both ends of the generation, by the trapezoid rule (as the model).
void add_generation(const GenerationChoice& generation, const ReplayChoice& replay, const model::LayoutModel& layouts,
                    const model::Workload& workload, model::DecodeAlgorithm algorithm,
                    const model::PlanOptions& options, bool check_memory, SimulatedCase& c) {
  const model::Workload slice = model::attention_slice(workload, layouts.groups().layout, c.layout->slowest_group);
  const model::DecodeModel& decode = layouts.cp_model(c.layout->slowest_group);
  if (generation.prefill || generation.tokens)
    c.row.prefill_s = generation.prefill ? decode.prefill_s(slice, c.plan.seq_len, options) : 0.0;
  if (generation.tokens) {
    const long long tokens = *generation.tokens;
    const SimulatedCase end = simulate_layout(layouts, workload, algorithm, c.plan.seq_len + tokens - 1,
                                              replay_options(replay), false, options, std::nullopt);
    c.row.generation_s =
        *c.row.prefill_s +
        model::generation_from_ends_s(tokens, c.row.result.token_s, end.row.result.token_s, c.row.result.first_call_s);
    set_generation_band(c.row, workload.layers, tokens);
  }
  if (!generation.prefill) c.row.prefill_s.reset();
}

}  // namespace

SimulatedCase simulate_row(const LayoutChoice& layout, const GenerationChoice& generation, const ReplayChoice& replay,
                           const model::LayoutModel& layouts, const model::Workload& workload, long long seq_len,
                           model::DecodeAlgorithm algorithm, const model::PlanOptions& options, bool check_memory) {
  const model::LayoutAttention predicted = layouts.attention(algorithm, workload, seq_len, options);
  std::optional<model::StepResult> step;
  std::string shortfall;
  if (layout.scope != model::Scope::attention) {
    DecodeRow model_row;  // the model's step: its parts' times, and whether it fits
    model_row.result = predicted.slowest;
    model_row.layout = layouts.groups().layout;
    model_row.result.volume = predicted.volume;
    add_step(layout, layouts, workload, predicted, model_row);
    step = model_row.step;
    shortfall = model_row.memory_shortfall;
  } else {
    shortfall = model::memory_shortfall(predicted.slowest, layouts.cp_model(predicted.slowest_group));
  }
  if (check_memory && !shortfall.empty()) {  // before the replay
    DecodeRow refused;
    refused.result = predicted.slowest;
    refused.layout = layouts.groups().layout;
    refused.memory_shortfall = shortfall;
    refuse_unless_fits(refused, workload, true);
  }
  SimulatedCase c =
      simulate_layout(layouts, workload, algorithm, seq_len, replay_options(replay), false, options, step);
  c.row.memory_shortfall = shortfall;
  c.predicted = predicted.slowest;  // the model's layout: its slowest group, with the links it shares
  c.row.model_latency_s = predicted.slowest.latency_s;
  c.row.result.volume = predicted.volume;  // every CP group's
  set_layout(c.row, layouts.groups(), layouts.topology());
  c.row.workload = workload.name;
  if (step) add_simulated_step(*step, *c.layout, workload, c.row);
  add_generation(generation, replay, layouts, workload, algorithm, options, check_memory, c);
  if (!replay.degradation.empty()) {
    c.healthy_s = simulate_layout(layouts, workload, algorithm, seq_len, replay_options(replay, false), false, options,
                                  std::nullopt)
                      .row.result.latency_s;
  }
  return c;
}

std::vector<DecodeRow> predict_rows(const topologies::Topology& topology, const DecodeRequest& request) {
  const model::LayoutModel layouts(topology, layout_groups(request.layout, topology, request.gpus));
  std::vector<DecodeRow> rows;
  for (const model::Workload& workload : request.workloads) {
    for (long long seq_len : request.seq_lens) {
      for (model::DecodeAlgorithm algorithm : request.algorithms) {
        rows.push_back(predict_row(request.layout, request.generation, layouts, workload, seq_len, algorithm,
                                   request.options, request.check_memory));
      }
    }
  }
  return rows;
}

std::vector<SimulatedCase> simulate_cases(const topologies::Topology& topology, const DecodeRequest& request,
                                          ReplayChoice replay, const BeforeCase& before_case) {
  const model::LayoutModel layouts(topology, layout_groups(request.layout, topology, request.gpus));
  std::vector<SimulatedCase> cases;
  for (const model::Workload& workload : request.workloads) {
    for (long long seq_len : request.seq_lens) {
      for (model::DecodeAlgorithm algorithm : request.algorithms) {
        if (before_case) before_case(replay, workload, seq_len, algorithm);
        cases.push_back(simulate_row(request.layout, request.generation, replay, layouts, workload, seq_len, algorithm,
                                     request.options, request.check_memory));
      }
    }
  }
  return cases;
}

}  // namespace treering::analysis
