#include "layout_args.hpp"

namespace treering::cli {

void add_expert_options(CLI::App& command, LayoutArgs& args) {
  command
      .add_option("--ep", args.ep,
                  "Expert parallelism: the MoE layers' routed experts over N GPUs, every GPU of the layout (the "
                  "attention's layout repeated N / (tp x cp) times); each MoE layer dispatches and combines its tokens")
      ->check(CLI::Range(1, 1 << 30));
  command
      .add_option_function<std::string>(
          "--ep-kernel", [&args](const std::string& name) { args.experts.kernel = model::parse_ep_kernel(name); },
          "With --ep: nccl, low-latency (an RDMA write per token copy, through NICs) or normal (RDMA once per node, "
          "NVLink forwarding)")
      ->default_str(model::to_string(args.experts.kernel));
  command
      .add_option("--micro-batches", args.experts.micro_batches,
                  "With --ep: 2 overlaps one half batch's exchanges with the other's compute")
      ->capture_default_str();
  command.add_option("--redundant-experts", args.experts.redundant_experts,
                     "With --ep: replicas of the hottest experts beside the routed ones");
  command.add_option("--expert-skew", args.experts.skew,
                     "With --ep, what-if: the hottest expert draws this many times the mean expert's tokens");
}

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
  add_expert_options(command, args);
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
