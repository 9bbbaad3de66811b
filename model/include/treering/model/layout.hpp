// Decode layouts as engines deploy them: tensor parallelism (TP) splits the attention heads over `tp` GPUs,
// context parallelism (CP) splits every sequence's KV cache over `cp` GPUs; tp x cp GPUs in all. The GPUs that
// hold the same heads form a CP group and run a combine (plan.hpp) among themselves; the tp CP groups run side
// by side on different heads. Pure.
//
// Placement: the GPU list (given, or the cluster's first tp x cp GPUs node by node) is cut into CP ranks of tp
// consecutive GPUs (`tp_inner`, the default: a TP group sits inside a node while tp fits in one) or into TP
// slices of cp consecutive GPUs (`cp_inner`). Example: tp 8, cp 2 on 2 DGX H100 (GPUs 0-15), tp_inner: TP groups
// {0..7} and {8..15}; CP group t = {t, 8 + t}: each pair crosses the network on its own rail.
// Replicas (data parallelism): `replicas` copies of the layout side by side, each on the next tp x cp GPUs of the
// list, each serving requests of its own; their groups run at once and share the network. Example: tp 8 x cp 16
// on 16,384 GPUs: 128 replicas, 1,024 CP groups of 16 GPUs.
#pragma once

#include <string>
#include <vector>

#include "treering/model/expert_layout.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::model {

// How the attention uses a layout's GPUs:
//   heads (tensor parallelism, the default): a TP group of tp GPUs splits the heads; cp such groups split the tokens.
//   decode_context (vLLM's --decode-context-parallel-size, SGLang's DCP): the cp ranks that split the tokens belong to
//     the TP group, which runs the projections and the MLP over all tp x cp GPUs (engine TP = tp x cp, DCP = cp); each
//     rank attends 1/tp of the heads over its shard after an all-gather of those heads' queries (each rank projected
//     its own slice of them). Example: vLLM's --tp 8 --dcp 8 is tp 1 x cp 8 here; --tp 8 --dcp 2 is tp 4 x cp 2.
//   data (DP attention, SGLang's --enable-dp-attention): each of the tp GPUs attends its own sequences (batch / tp,
//     at least one: engines run an idle rank on a dummy batch) with every head, holding the attention's weights whole;
//     the MLP splits over the tp GPUs, the hidden states all-gathered before it and reduce-scattered after. cp is 1.
enum class AttentionParallelism { heads, decode_context, data };
const char* to_string(AttentionParallelism parallelism);  // "tp" | "dcp" | "dp-attention"

struct Layout {
  int tp = 1;
  int cp = 1;
  int replicas = 1;
  AttentionParallelism attention = AttentionParallelism::heads;
  ExpertLayout experts = {};  // expert parallelism of the MoE layers: experts.ep = gpus() when on (1: off)
  int gpus() const { return tp * cp * replicas; }
};

// The layout as an engine names it: "tp 8 x cp 2", "tp 8 (dcp 8)" (decode_context: tp x cp GPUs, cp of them
// splitting the tokens), "tp 8, dp attention" (data); " x R replicas" after it when R > 1.
std::string layout_name(const Layout& layout);

// The ways the attention's projections split: tp (heads), tp x cp (decode_context), 1 (data: every GPU holds them).
int projection_split(const Layout& layout);

enum class LayoutOrder { tp_inner, cp_inner };
const char* to_string(LayoutOrder order);
LayoutOrder parse_layout_order(const std::string& text);  // "tp-inner" | "cp-inner"; throws std::invalid_argument

struct LayoutGroups {
  Layout layout;
  LayoutOrder order = LayoutOrder::tp_inner;
  std::vector<int> gpus;                    // all of them, in the list's order
  std::vector<std::vector<int>> cp_groups;  // [r x tp + t][c]: replica r's GPU holding head slice t and shard c
  std::vector<std::vector<int>> tp_groups;  // [r x cp + c][t]
  bool tp_crosses_domains = false;          // some TP group spans scale-up domains
};

// Throws std::invalid_argument with the reason: tp, cp or replicas below 1; more GPUs than the cluster has; a GPU
// list of another size than tp x cp x replicas; a TP group across scale-up domains when `tp_in_domain` asks for none;
// an EP size other than 1 or the layout's GPUs, or micro-batches other than 1 or 2.
LayoutGroups place_layout(const topologies::Topology& topology, Layout layout, std::vector<int> gpus = {},
                          LayoutOrder order = LayoutOrder::tp_inner, bool tp_in_domain = false);

// The attention one TP rank runs: query_heads / tp heads; kv_heads / tp KV heads, or one (replicated on
// tp / kv_heads ranks, as engines do) when tp exceeds them; the parameters split tp ways. Throws
// std::invalid_argument when the heads do not split. Example: llama3.1-405b (128 query, 8 KV heads) at tp 16:
// 8 query heads and 1 KV head per GPU, each KV head on 2 GPUs.
Workload head_slice(const Workload& workload, int tp);

// The attention CP group `group` (LayoutGroups::cp_groups' index) runs: head_slice(workload, tp), or with data
// parallel attention every head over its own sequences (owned_sequences of the batch over tp, at least one).
Workload attention_slice(const Workload& workload, const Layout& layout, int group);

}  // namespace treering::model
