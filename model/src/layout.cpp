// Placing a TP x CP layout on a cluster's GPUs (layout.hpp).
#include "treering/model/layout.hpp"
#include "treering/model/plan.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

namespace treering::model {

const char* to_string(LayoutOrder order) { return order == LayoutOrder::tp_inner ? "tp-inner" : "cp-inner"; }

LayoutOrder parse_layout_order(const std::string& text) {
  if (text == "tp-inner") return LayoutOrder::tp_inner;
  if (text == "cp-inner") return LayoutOrder::cp_inner;
  throw topologies::InputError("unknown placement '" + text + "' (tp-inner or cp-inner)");
}

const char* to_string(AttentionParallelism parallelism) {
  switch (parallelism) {
    case AttentionParallelism::heads: return "tp";
    case AttentionParallelism::decode_context: return "dcp";
    case AttentionParallelism::data: return "dp-attention";
  }
  return "?";
}

std::string layout_name(const Layout& layout) {
  std::string name;
  switch (layout.attention) {
    case AttentionParallelism::heads:
      name = "tp " + std::to_string(layout.tp) + " x cp " + std::to_string(layout.cp);
      break;
    case AttentionParallelism::decode_context:
      name = "tp " + std::to_string(layout.tp * layout.cp) + " (dcp " + std::to_string(layout.cp) + ")";
      break;
    case AttentionParallelism::data: name = "tp " + std::to_string(layout.tp) + ", dp attention"; break;
  }
  if (layout.replicas > 1) name += " x " + std::to_string(layout.replicas) + " replicas";
  if (layout.experts.ep > 1) name += ", ep " + std::to_string(layout.experts.ep);
  if (layout.experts.ep > 1 && layout.experts.micro_batches > 1)
    name += ", " + std::to_string(layout.experts.micro_batches) + " micro-batches";
  return name;
}

int projection_split(const Layout& layout) {
  switch (layout.attention) {
    case AttentionParallelism::heads: return layout.tp;
    case AttentionParallelism::decode_context: return layout.tp * layout.cp;
    case AttentionParallelism::data: return 1;
  }
  return layout.tp;
}

namespace {

void check_tp_domains(const topologies::Topology& topology, LayoutGroups& groups, bool tp_in_domain) {
  for (const std::vector<int>& group : groups.tp_groups) {
    std::set<int> domains;
    for (int gpu : group) domains.insert(topology.domain_of_gpu(gpu));
    if (domains.size() < 2) continue;
    groups.tp_crosses_domains = true;
    if (tp_in_domain) {
      throw topologies::InputError(layout_name(groups.layout) + ": a TP group of " + std::to_string(group.size()) +
                                   " GPUs (GPU " + std::to_string(group.front()) + " to " +
                                   std::to_string(group.back()) + ") spans " + std::to_string(domains.size()) +
                                   " scale-up domains (lower --tp, or let TP cross domains)");
    }
  }
}

}  // namespace

LayoutGroups place_layout(const topologies::Topology& topology, Layout layout, std::vector<int> gpus, LayoutOrder order,
                          bool tp_in_domain) {
  if (layout.tp < 1 || layout.cp < 1) throw topologies::InputError("--tp and --cp must be at least 1");
  if (layout.replicas < 1) throw topologies::InputError("--replicas must be at least 1");
  if (layout.attention == AttentionParallelism::data && layout.cp > 1)
    throw topologies::InputError("data-parallel attention keeps each sequence on one GPU: --cp must be 1");
  const long long wanted = static_cast<long long>(layout.tp) * layout.cp * layout.replicas;
  if (layout.experts.ep != 1 && layout.experts.ep != wanted)
    throw topologies::InputError("--ep " + std::to_string(layout.experts.ep) + " must be the layout's " +
                                 std::to_string(wanted) + " GPUs (" + layout_name(layout) +
                                 "): the experts spread over every GPU that serves");
  if (layout.experts.micro_batches != 1 && layout.experts.micro_batches != 2)
    throw topologies::InputError("--micro-batches must be 1 or 2");
  if (gpus.empty()) {
    if (wanted > topology.gpu_count()) {
      throw topologies::InputError(layout_name(layout) + " needs " + std::to_string(wanted) +
                                   " GPUs; the cluster has " + std::to_string(topology.gpu_count()));
    }
    gpus.resize(static_cast<size_t>(wanted));
    std::iota(gpus.begin(), gpus.end(), 0);
  } else if (static_cast<long long>(gpus.size()) != wanted) {
    throw topologies::InputError(layout_name(layout) + " needs " + std::to_string(wanted) + " GPUs; --gpus names " +
                                 std::to_string(gpus.size()));
  }
  for (int gpu : gpus) {
    if (gpu < 0 || gpu >= topology.gpu_count()) {
      throw topologies::InputError("no GPU " + std::to_string(gpu) + " (the cluster has " +
                                   std::to_string(topology.gpu_count()) + ")");
    }
  }
  LayoutGroups groups{layout, order, gpus, {}, {}, false};
  groups.cp_groups.assign(static_cast<size_t>(layout.tp) * layout.replicas, {});
  groups.tp_groups.assign(static_cast<size_t>(layout.cp) * layout.replicas, {});
  for (int r = 0; r < layout.replicas; ++r) {
    const size_t first = static_cast<size_t>(r) * layout.tp * layout.cp;
    for (int t = 0; t < layout.tp; ++t) {
      for (int c = 0; c < layout.cp; ++c) {
        const int index = order == LayoutOrder::tp_inner ? c * layout.tp + t : t * layout.cp + c;
        const int gpu = gpus[first + static_cast<size_t>(index)];
        groups.cp_groups[static_cast<size_t>(r * layout.tp + t)].push_back(gpu);
        groups.tp_groups[static_cast<size_t>(r * layout.cp + c)].push_back(gpu);
      }
    }
  }
  check_tp_domains(topology, groups, tp_in_domain);
  return groups;
}

Workload head_slice(const Workload& workload, int tp) {
  validate(workload);
  if (tp < 1) throw topologies::InputError("--tp must be at least 1");
  if (workload.query_heads % tp != 0) {
    throw topologies::InputError(workload.name + ": its " + std::to_string(workload.query_heads) +
                                 " query heads do not split over tp " + std::to_string(tp));
  }
  if (workload.kv_heads >= tp ? workload.kv_heads % tp != 0 : tp % workload.kv_heads != 0) {
    throw topologies::InputError(workload.name + ": its " + std::to_string(workload.kv_heads) +
                                 " KV heads neither split over tp " + std::to_string(tp) +
                                 " nor replicate evenly on it");
  }
  Workload slice = workload;
  slice.query_heads = workload.query_heads / tp;
  slice.kv_heads = workload.kv_heads >= tp ? workload.kv_heads / tp : 1;
  if (!has_latent_attention(workload)) slice.hidden_size = slice.query_heads * slice.head_dim;
  slice.parameters = workload.parameters / tp;
  return slice;
}

Workload attention_slice(const Workload& workload, const Layout& layout, int group) {
  if (layout.attention != AttentionParallelism::data) return head_slice(workload, layout.tp);
  validate(workload);
  Workload own = workload;
  own.batch = std::max<int>(1, static_cast<int>(owned_sequences(workload.batch, layout.tp, group % layout.tp).count));
  return own;
}

}  // namespace treering::model
