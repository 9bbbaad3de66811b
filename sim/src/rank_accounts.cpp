#include "rank_accounts.hpp"

#include <algorithm>

namespace treering::sim::detail {

double kernel_time_s(const model::DecodeModel& model, const model::DecodePlan& plan, const Degradation& degradation,
                     int rank, const model::Step& step) {
  if (step.fixed_s >= 0) return step.fixed_s;         // host time: no kernel
  if (step.attention && step.flops == 0) return 0.0;  // an empty shard runs no kernel
  const model::ComputeRates& rates = step.attention ? model.rates(rank) : model.slowest_rates();
  const double launch_s =
      plan.costs.kernel_launch_s ? *plan.costs.kernel_launch_s : rates.launch_s;  // model::plan_rates's
  const double slowdown = degradation.gpu_slowdown.empty() ? 1.0 : [&] {
    const auto slow = degradation.gpu_slowdown.find(plan.gpus[static_cast<size_t>(rank)]);
    return slow == degradation.gpu_slowdown.end() ? 1.0 : slow->second;
  }();
  // an attention kernel at its kind's rates (latent attention: FlashMLA's efficiencies), as the model times it
  const model::KernelRates kernel = step.attention ? model::attention_kernel_rates(rates, plan.workload)
                                                   : model::KernelRates{rates.hbm_Bps, rates.peak_flops};
  return (step.kernels * launch_s + std::max(step.bytes / kernel.hbm_Bps, step.flops / kernel.peak_flops)) * slowdown;
}

RankAccounts::RankAccounts(std::vector<int> domain_of_rank, int stages, bool record)
    : last_send(domain_of_rank.size()),
      domain_of_rank_(std::move(domain_of_rank)),
      stage_(domain_of_rank_.size(), 0),
      totals_(static_cast<size_t>(stages), std::vector<RankTimes>(domain_of_rank_.size())),
      recent_kernels_(domain_of_rank_.size()),
      record_(record) {
  for (std::vector<RankTimes>& stage : totals_) {
    for (size_t rank = 0; rank < stage.size(); ++rank) stage[rank].rank = static_cast<int>(rank);
  }
}

void RankAccounts::note(const Activity& activity) {
  RankTimes& t = current(activity.rank);
  const double span_s = activity.end_s - activity.start_s;
  switch (activity.kind) {
    case ActivityKind::compute: t.compute_s += span_s; break;
    case ActivityKind::send: break;  // counted where sends are known not to overlap (busy_sending)
    case ActivityKind::wait: {
      const bool across =
          domain_of_rank_[static_cast<size_t>(activity.peer)] != domain_of_rank_[static_cast<size_t>(activity.rank)];
      (across ? t.wait_inter_s : t.wait_intra_s) += span_s;
      break;
    }
    case ActivityKind::collective: t.collective_s += span_s; break;
  }
  if (record_) activities.push_back(activity);
}

void RankAccounts::kernel(int rank, double start_s, double end_s) {
  auto& recent = recent_kernels_[static_cast<size_t>(rank)];
  std::rotate(recent.begin(), recent.begin() + 1, recent.end());
  recent.back() = {start_s, end_s};
}

void RankAccounts::busy_sending(int rank, double start_s, double end_s) {
  const auto& recent = recent_kernels_[static_cast<size_t>(rank)];
  double hidden_s = 0;
  int counted = 0;
  for (auto kernel = recent.rbegin(); kernel != recent.rend() && counted < 2; ++kernel) {
    if (kernel->first >= end_s) continue;  // started as the send ended, or later
    hidden_s += std::max(0.0, std::min(end_s, kernel->second) - std::max(start_s, kernel->first));
    ++counted;
  }
  RankTimes& t = current(rank);
  t.send_s += end_s - start_s;
  t.overlapped_s += hidden_s;
  last_send[static_cast<size_t>(rank)] = {end_s - start_s, hidden_s};
}

void book_skipped_rounds(RankAccounts& accounts, int rank, const model::DecodeModel& model,
                         const model::DecodePlan& plan, const Degradation& degradation, int local, int round,
                         double now_s, double last_round_s) {
  std::vector<model::Step> steps;
  model::append_round_steps(plan, local, round, steps);
  double attention_s = 0;
  for (const model::Step& step : steps) {
    attention_s += step.kind == model::StepKind::compute ? kernel_time_s(model, plan, degradation, local, step) : 0.0;
  }
  const int ranks = static_cast<int>(plan.gpus.size());
  const int skipped = ranks - 1 - round;  // rounds round .. p-2, each with a send
  RankTimes& t = accounts.current(rank);
  const int previous = (local - 1 + ranks) % ranks;
  t.compute_s += skipped * attention_s;
  (model.crosses_domains(previous, local) ? t.wait_inter_s : t.wait_intra_s) +=
      std::max(0.0, last_round_s - now_s - skipped * attention_s);
  const std::pair<double, double>& last_send = accounts.last_send[static_cast<size_t>(rank)];
  t.send_s += skipped * last_send.first;  // in the steady state all alike
  t.overlapped_s += skipped * last_send.second;
}

}  // namespace treering::sim::detail
