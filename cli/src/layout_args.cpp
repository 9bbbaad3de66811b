#include "layout_args.hpp"

#include <stdexcept>

namespace treering::cli {

void add_layout_options(CLI::App& command, LayoutArgs& args) {
  command.add_option("--tp", args.tp, "Tensor parallel: GPUs the attention heads split over (default: 1, or the GPUs over --cp)")
      ->check(CLI::PositiveNumber);
  command.add_option("--cp", args.cp, "Context parallel: GPUs each sequence's KV cache splits over (default: the GPUs over --tp)")
      ->check(CLI::PositiveNumber);
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

}  // namespace treering::cli
