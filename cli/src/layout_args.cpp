#include "layout_args.hpp"

namespace treering::cli {

void add_layout_options(CLI::App& command, LayoutArgs& args) {
  command
      .add_option("--tp", args.tp,
                  "Tensor parallel: GPUs the attention heads split over (default: 1, or the GPUs over --cp)")
      ->check(CLI::Range(1, 1 << 30));
  command
      .add_option("--cp", args.cp,
                  "Context parallel: GPUs each sequence's KV cache splits over (default: the GPUs over --tp)")
      ->check(CLI::Range(1, 1 << 30));
  command
      .add_option("--dcp", args.dcp,
                  "Decode context parallel inside the TP group (vLLM's --decode-context-parallel-size): the --tp GPUs "
                  "run the projections and MLP; N of them split each sequence's KV cache, --tp / N the heads")
      ->check(CLI::Range(1, 1 << 30));
  command.add_flag("--dp-attention", args.dp_attention,
                   "Data-parallel attention: each of the --tp GPUs attends its own sequences with every head; the MLP "
                   "splits over them (hidden states all-gathered before it, reduce-scattered after)");
  command
      .add_option("--replicas", args.replicas,
                  "Copies of the tp x cp layout side by side on the next GPUs, each serving its own requests (data "
                  "parallelism; 'all': as many as the GPUs hold): their transfers share NICs and spines")
      ->capture_default_str();
  command
      .add_option_function<std::string>(
          "--placement", [&args](const std::string& name) { args.placement = model::parse_layout_order(name); },
          "tp-inner: a TP group on consecutive GPUs of the list (inside a node); cp-inner: a CP group on them")
      ->check(CLI::IsMember({"tp-inner", "cp-inner"}))
      ->default_str(model::to_string(args.placement));
  command.add_flag("--tp-in-domain", args.tp_in_domain, "Refuse a layout whose TP group spans scale-up domains");
  command
      .add_option_function<std::string>(
          "--scope", [&args](const std::string& name) { args.scope = model::parse_scope(name); },
          "attention: one layer's attention (the combine); layer: plus projections, norms, MLP and TP "
          "collectives; step: all layers plus the LM head: time per output token")
      ->check(CLI::IsMember({"attention", "layer", "step"}))
      ->default_str(model::to_string(args.scope));
}

}  // namespace treering::cli
