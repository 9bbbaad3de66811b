#include "layout_args.hpp"

#include <stdexcept>

#include "treering/model/step.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {

void add_layout_options(CLI::App& command, LayoutArgs& args) {
  command.add_option("--tp", args.tp, "Tensor parallel: GPUs the attention heads split over (default: 1, or the GPUs over --cp)")
      ->check(CLI::Range(1, 1 << 30));
  command.add_option("--cp", args.cp, "Context parallel: GPUs each sequence's KV cache splits over (default: the GPUs over --tp)")
      ->check(CLI::Range(1, 1 << 30));
  command.add_option("--placement", args.placement,
                     "tp-inner: a TP group on consecutive GPUs of the list (inside a node); cp-inner: a CP group on them")
      ->check(CLI::IsMember({"tp-inner", "cp-inner"}))->capture_default_str();
  command.add_flag("--tp-in-domain", args.tp_in_domain, "Refuse a layout whose TP group spans scale-up domains");
  command.add_option("--scope", args.scope,
                     "attention: one layer's attention (the combine); layer: plus projections, norms, MLP and TP "
                     "collectives; step: all layers plus the LM head: time per output token")
      ->check(CLI::IsMember({"attention", "layer", "step"}))->capture_default_str();
}

model::LayoutGroups layout_groups(const LayoutArgs& args, const topologies::Topology& topology, const std::vector<int>& gpus) {
  const int available = gpus.empty() ? topology.gpu_count() : static_cast<int>(gpus.size());
  model::Layout layout{args.tp.value_or(1), args.cp.value_or(1)};
  auto rest = [&](int given, const char* option) {
    if (available % given != 0) {
      throw std::invalid_argument(std::string(option) + " " + std::to_string(given) + " does not divide the " +
                                  std::to_string(available) + " GPUs (give both --tp and --cp, or --gpus)");
    }
    return available / given;
  };
  if (args.tp && !args.cp) layout.cp = rest(*args.tp, "--tp");
  if (args.cp && !args.tp) layout.tp = rest(*args.cp, "--cp");
  if (!args.tp && !args.cp) layout.cp = available;
  return model::place_layout(topology, layout, gpus, model::parse_layout_order(args.placement), args.tp_in_domain);
}

void add_step(const LayoutArgs& args, const model::LayoutModel& layouts, const model::Workload& workload, int slowest_group,
              DecodeRow& row) {
  const model::Scope scope = model::parse_scope(args.scope);
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

}  // namespace treering::cli
