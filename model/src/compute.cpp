#include "treering/model/compute.hpp"

#include <algorithm>
#include <stdexcept>

#include "treering/model/attention_kernel.hpp"
#include "treering/topologies/input_error.hpp"

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
  ComputeRates rates{model.hbm_bandwidth_Bps * efficiency,
                     model.peak_fp16_flops,
                     launch_s,
                     model.hbm_capacity_bytes,
                     model.hbm_bandwidth_Bps,
                     {},
                     {},
                     model.multiprocessors,
                     {}};
  if (spec.calibration) {
    rates.step = spec.calibration->step;
    rates.step_attention_shapes = spec.calibration->step_attention_shapes;
    rates.attention_shapes = spec.calibration->attention_shapes;
    // A device shared by P virtual ranks (NodeGroup::shared_device) streams at 1/P of a shape's measured bandwidth
    // for each, as its HBM bandwidth; each rank's kernel still splits for the whole GPU's multiprocessors.
    if (group.shared_by > 1) {
      for (topologies::AttentionShapeCalibration& shape : rates.attention_shapes)
        shape.bandwidth_Bps /= group.shared_by;
    }
  }
  return rates;
}

const topologies::AttentionShapeCalibration* find_attention_shape(
    const std::vector<topologies::AttentionShapeCalibration>& shapes, const Workload& workload) {
  const SplitKvShape kernel = split_kv_shape(workload);
  for (const topologies::AttentionShapeCalibration& shape : shapes) {
    if (shape.head_dim == kernel.head_dim && shape.group == kernel.group) return &shape;
  }
  return nullptr;
}

double attention_bytes(const PlanSizes& sizes, long long tokens, double extra_bytes) {
  return static_cast<double>(tokens) * sizes.kv_bytes_per_token + sizes.q_bytes + sizes.o_bytes + sizes.stats_bytes +
         extra_bytes;
}

double attention_time_s(const ComputeRates& rates, const Workload& workload, const PlanSizes& sizes, long long tokens,
                        double extra_bytes) {
  if (tokens <= 0) return 0.0;
  const double bytes = attention_bytes(sizes, tokens, extra_bytes);
  if (const topologies::AttentionShapeCalibration* shape = find_attention_shape(rates.attention_shapes, workload)) {
    const int chunks = split_kv_chunks(split_kv_shape(workload), rates.multiprocessors, tokens);
    return shape->fixed_s + shape->split_per_chunk_s * chunks + bytes / shape->bandwidth_Bps;
  }
  const KernelRates kernel = attention_kernel_rates(rates, workload);
  return rates.launch_s + std::max(bytes / kernel.hbm_Bps, attention_flops(workload, tokens) / kernel.peak_flops);
}

KernelRates attention_kernel_rates(const ComputeRates& rates, const Workload& workload) {
  if (!has_latent_attention(workload)) return {rates.hbm_Bps, rates.peak_flops};
  const double rated_Bps = rates.hbm_rated_Bps > 0 ? rates.hbm_rated_Bps : rates.hbm_Bps;
  return {rated_Bps * kLatentAttentionHbmEfficiency, rates.peak_flops * kLatentAttentionFlopEfficiency};
}

double attention_flops(const Workload& workload, long long tokens) {
  return 2.0 * workload.batch * workload.query_heads * static_cast<double>(tokens) *
         (workload.head_dim + attention_value_dim(workload));
}

double kernel_time_s(const ComputeRates& rates, double bytes) { return rates.launch_s + bytes / rates.hbm_Bps; }

ComputeRates plan_rates(const ComputeRates& rates, const DecodePlan& plan) {
  ComputeRates adjusted = rates;
  if (plan.costs.kernel_launch_s) adjusted.launch_s = *plan.costs.kernel_launch_s;
  return adjusted;
}

namespace {

// The most tokens a rank attends to within time_s (attention_time_s is increasing in the tokens).
long long tokens_within(const ComputeRates& rates, const Workload& workload, const PlanSizes& sizes, double time_s,
                        long long most) {
  long long low = 0, high = most;  // attention_time_s(low) <= time_s holds for low = 0
  while (low < high) {
    const long long mid = low + (high - low + 1) / 2;
    if (attention_time_s(rates, workload, sizes, mid) <= time_s)
      low = mid;
    else
      high = mid - 1;
  }
  return low;
}

}  // namespace

std::vector<long long> split_by_speed(long long tokens, const std::vector<ComputeRates>& rates,
                                      const Workload& workload, const PlanSizes& sizes) {
  if (rates.empty()) throw topologies::InputError("at least one GPU is needed");
  double low_s = 0, high_s = 0;  // all tokens on the fastest-starting rank bounds T from above
  for (const ComputeRates& r : rates) high_s = std::max(high_s, attention_time_s(r, workload, sizes, tokens));
  std::vector<long long> counts(rates.size());
  auto fill = [&](double time_s) {
    long long total = 0;
    for (size_t i = 0; i < rates.size(); ++i)
      total += counts[i] = tokens_within(rates[i], workload, sizes, time_s, tokens);
    return total;
  };
  for (int step = 0; step < 100 && high_s - low_s > 1e-15 * high_s; ++step) {
    const double mid_s = (low_s + high_s) / 2;
    (fill(mid_s) >= tokens ? high_s : low_s) = mid_s;
  }
  long long surplus = fill(high_s) - tokens;
  while (surplus-- > 0) {  // at most one token per rank: from the rank whose attention would end last
    size_t last = 0;
    double last_s = -1;
    for (size_t i = 0; i < rates.size(); ++i) {
      const double t = counts[i] > 0 ? attention_time_s(rates[i], workload, sizes, counts[i]) : -1;
      if (t >= last_s) last_s = t, last = i;  // ties: the last rank, so the equal split keeps its +1s first
    }
    --counts[last];
  }
  return counts;
}

}  // namespace treering::model
