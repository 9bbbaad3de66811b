// TimingModels (timing_models.hpp).
#include "timing_models.hpp"

#include <map>
#include <numeric>
#include <stdexcept>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

namespace treering::validate {
namespace {

bool looks_like_file(const std::string& name) {
  return name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
}

model::Workload workload_of(const TimedDecode& t) {
  model::Workload workload =
      looks_like_file(t.workload) ? topologies::load_workload_file(t.workload) : model::find_workload(t.workload);
  if (t.batch > 0) workload.batch = t.batch;
  model::validate(workload);
  return workload;
}

// The cluster with at least `gpus` GPUs: as its file says, or with as many nodes as they need (clusters of one
// node group). Example: dgx-h100 (8 GPUs a node) and 12 GPUs -> 2 nodes.
topologies::Topology topology_of(const TimedDecode& t) {
  topologies::Topology topology = topologies::build_topology(t.cluster);
  if (topology.gpu_count() >= t.gpus) return topology;
  const int per_node = topology.node(0).gpus;
  return topologies::build_topology(t.cluster, {(t.gpus + per_node - 1) / per_node});
}

}  // namespace

TimingModels::TimingModels(const std::vector<TimedDecode>& timings) {
  std::map<std::pair<std::string, int>,
           std::pair<std::shared_ptr<const topologies::Topology>, std::shared_ptr<const model::DecodeModel>>>
      built;
  for (const TimedDecode& t : timings) {
    try {
      auto& [topology, decode] = built[{t.cluster, t.gpus}];
      if (!decode) {
        topology = std::make_shared<const topologies::Topology>(topology_of(t));
        if (topology->gpu_count() < t.gpus)
          throw topologies::InputError("the cluster has " + std::to_string(topology->gpu_count()) + " GPUs, not " +
                                       std::to_string(t.gpus));
        std::vector<int> gpus(static_cast<size_t>(t.gpus));
        std::iota(gpus.begin(), gpus.end(), 0);
        decode = std::make_shared<const model::DecodeModel>(*topology, gpus);
      }
      cases_.push_back({topology, decode, workload_of(t), model::parse_decode_algorithm(t.algorithm), t});
    } catch (const topologies::InputError& error) {
      throw topologies::InputError({t.file, t.line, 0}, error.what());
    } catch (const std::exception& error) {
      throw topologies::InputError({t.file, t.line, 0}, error.what());
    }
  }
}

double TimingModels::predict_s(size_t index, const topologies::ImplProfile& profile) const {
  const Case& c = cases_.at(index);
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(profile);
  if (!c.timing.tokens)
    return c.decode->evaluate(c.decode->plan(c.algorithm, c.workload, c.timing.seq_len, options)).latency_s;
  const double prefill_s = c.timing.prefill ? c.decode->prefill_s(c.workload, c.timing.seq_len) : 0.0;
  return prefill_s + c.decode->generation_s(c.algorithm, c.workload, c.timing.seq_len, *c.timing.tokens, options);
}

}  // namespace treering::validate
