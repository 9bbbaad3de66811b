#include "treering/model/compute.hpp"

#include <algorithm>

namespace treering::model {

ComputeRates compute_rates(const topologies::Topology& topology, int gpu) {
  const topologies::ClusterSpec& spec = topology.spec();
  const topologies::NodeGroup& group = spec.groups[static_cast<size_t>(topology.node(topology.node_of_gpu(gpu)).group)];
  const topologies::GpuModel& model = spec.gpu_models.at(group.gpu_model);
  double efficiency = kDefaultHbmEfficiency;
  double launch_s = model.launch_overhead_s;
  if (spec.calibration) {
    efficiency = spec.calibration->hbm_efficiency.value_or(efficiency);
    launch_s = spec.calibration->launch_overhead_s.value_or(launch_s);
  }
  return {model.hbm_bandwidth_Bps * efficiency, model.peak_fp16_flops, launch_s, model.hbm_capacity_bytes};
}

double attention_time_s(const ComputeRates& rates, const Workload& workload, const PlanSizes& sizes, long long tokens,
                        double extra_bytes) {
  if (tokens <= 0) return 0.0;
  const double n = static_cast<double>(tokens);
  const double bytes = n * sizes.kv_bytes_per_token + sizes.q_bytes + sizes.o_bytes + sizes.stats_bytes + extra_bytes;
  const double flops = 4.0 * workload.batch * workload.query_heads * workload.head_dim * n;
  return rates.launch_s + std::max(bytes / rates.hbm_Bps, flops / rates.peak_flops);
}

double kernel_time_s(const ComputeRates& rates, double bytes) { return rates.launch_s + bytes / rates.hbm_Bps; }

}  // namespace treering::model
