// LayoutModel (layout_model.hpp): the CP groups' combines side by side.
#include "treering/model/layout_model.hpp"

#include <algorithm>

#include "treering/model/link_sharing.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {

namespace {

// Whether the output projection and the MLP run over each replica's tp x cp GPUs: a combine that leaves the output
// split by head, or decode context parallelism (whose TP group is all of them).
bool post_attention_over_all(const Layout& layout, DecodeAlgorithm algorithm) {
  return output_split(algorithm) == OutputSplit::by_head || layout.attention == AttentionParallelism::decode_context;
}

// Decode context parallelism takes its TP group's output projection by head: a combine that leaves each rank its own
// sequences would need another exchange first, which no engine runs.
void check_combine(const Layout& layout, DecodeAlgorithm algorithm) {
  if (layout.attention == AttentionParallelism::decode_context && output_split(algorithm) == OutputSplit::by_sequence)
    throw topologies::InputError(std::string(to_string(algorithm)) +
                                 " leaves each rank its own sequences; decode context parallelism (--dcp) needs a "
                                 "combine that leaves every head on the TP group (tree, ring, a2a, ag-rs, ...)");
}

// The plan options a layout adds: decode context parallelism gathers the queries before attending.
PlanOptions layout_options(const Layout& layout, const PlanOptions& options) {
  PlanOptions with = options;
  if (layout.attention == AttentionParallelism::decode_context) with.gather_queries = true;
  return with;
}

}  // namespace

std::vector<std::vector<int>> post_attention_groups(const LayoutGroups& groups, DecodeAlgorithm algorithm) {
  if (!post_attention_over_all(groups.layout, algorithm)) return groups.tp_groups;
  std::vector<std::vector<int>> replicas;
  const auto size = static_cast<std::ptrdiff_t>(groups.layout.tp) * groups.layout.cp;
  for (auto first = groups.gpus.begin(); first != groups.gpus.end(); first += size)
    replicas.emplace_back(first, first + size);
  return replicas;
}

LayoutModel::LayoutModel(const topologies::Topology& topology, LayoutGroups groups)
    : topology_(&topology), groups_(std::move(groups)) {
  for (const std::vector<int>& group : groups_.cp_groups) cp_models_.emplace_back(topology, group);
  tp_group_ = describe_group(topology, groups_.tp_groups.front());
  const Layout& layout = groups_.layout;  // one replica's GPUs: where a combine split by head runs its layer
  all_group_ =
      describe_group(topology, std::vector<int>(groups_.gpus.begin(), groups_.gpus.begin() + layout.tp * layout.cp));
  if (layout.experts.ep > 1) ep_group_ = describe_group(topology, groups_.gpus);
}

const CommGroup& LayoutModel::post_attention_group(DecodeAlgorithm algorithm) const {
  return post_attention_over_all(groups_.layout, algorithm) ? all_group_ : tp_group_;
}

DecodePlan LayoutModel::plan(int t, DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                             const PlanOptions& options) const {
  check_combine(groups_.layout, algorithm);
  return cp_model(t).plan(algorithm, attention_slice(workload, groups_.layout, t), seq_len,
                          layout_options(groups_.layout, options));
}

// The groups run on different GPUs at once: each is timed with what the links it shares with the others cost it
// (link_sharing.hpp; none when no link is shared). Example: tp 8 x cp 2 on 2 DGX H100: 8 pairs {t, 8 + t}, each
// on its own NIC, all alike, nothing shared; with one NIC a node the 8 pairs' transfers share it, each 1/8.
LayoutAttention LayoutModel::attention(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                                       const PlanOptions& options) const {
  LayoutAttention result;
  result.impl = options.impl;
  std::vector<DecodePlan> plans;
  std::vector<const DecodeModel*> models;
  for (int t = 0; t < static_cast<int>(cp_models_.size()); ++t) {
    plans.push_back(plan(t, algorithm, workload, seq_len, options));
    models.push_back(&cp_models_[static_cast<size_t>(t)]);
  }
  const std::vector<GroupSharing> sharing = layout_sharing(models, plans);
  for (int t = 0; t < static_cast<int>(cp_models_.size()); ++t) {
    const DecodeModel& model = cp_models_[static_cast<size_t>(t)];
    DecodeResult r =
        model.evaluate(plans[static_cast<size_t>(t)],
                       sharing[static_cast<size_t>(t)].shares ? &sharing[static_cast<size_t>(t)] : nullptr);
    result.volume.per_gpu = std::max(result.volume.per_gpu, r.volume.per_gpu);
    result.volume.intra_node += r.volume.intra_node;
    result.volume.inter_node += r.volume.inter_node;
    result.volume.total += r.volume.total;
    result.group_latency_s.push_back(r.latency_s);
    if (t == 0 || r.latency_s > result.slowest.latency_s) {
      result.slowest = std::move(r);
      result.slowest_group = t;
    }
  }
  return result;
}

}  // namespace treering::model
