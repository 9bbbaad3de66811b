#include "rank_accounts.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace treering::sim::detail {

double kernel_time_s(const model::DecodeModel& model, const model::DecodePlan& plan, const Degradation& degradation,
                     int rank, const model::Step& step) {
  if (step.fixed_s >= 0) return step.fixed_s;          // host time: no kernel
  if (step.attention && step.flops == 0) return 0.0;  // an empty shard runs no kernel
  const model::ComputeRates rates = model::plan_rates(step.attention ? model.rates(rank) : model.slowest_rates(), plan);
  const auto slow = degradation.gpu_slowdown.find(plan.gpus[static_cast<size_t>(rank)]);
  return (step.kernels * rates.launch_s + std::max(step.bytes / rates.hbm_Bps, step.flops / rates.peak_flops)) *
         (slow == degradation.gpu_slowdown.end() ? 1.0 : slow->second);
}

void RankAccounts::note(const Activity& activity) {
  RankTimes& t = totals[static_cast<size_t>(activity.rank)];
  const double span_s = activity.end_s - activity.start_s;
  switch (activity.kind) {
    case ActivityKind::compute: t.compute_s += span_s; break;
    case ActivityKind::send: break;  // counted where sends are known not to overlap (busy_sending)
    case ActivityKind::wait: (model_.crosses_domains(activity.peer, activity.rank) ? t.wait_inter_s : t.wait_intra_s) += span_s; break;
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
  RankTimes& t = totals[static_cast<size_t>(rank)];
  t.send_s += end_s - start_s;
  t.overlapped_s += hidden_s;
  last_send[static_cast<size_t>(rank)] = {end_s - start_s, hidden_s};
}

void book_skipped_rounds(RankAccounts& accounts, const model::DecodeModel& model, const model::DecodePlan& plan,
                         const Degradation& degradation, int rank, int round, double now_s, double last_round_s) {
  std::vector<model::Step> steps;
  model::append_round_steps(plan, rank, round, steps);
  double attention_s = 0;
  for (const model::Step& step : steps) {
    attention_s += step.kind == model::StepKind::compute ? kernel_time_s(model, plan, degradation, rank, step) : 0.0;
  }
  const int ranks = static_cast<int>(plan.gpus.size());
  const int skipped = ranks - 1 - round;  // rounds round .. p-2, each with a send
  RankTimes& t = accounts.totals[static_cast<size_t>(rank)];
  const int previous = (rank - 1 + ranks) % ranks;
  t.compute_s += skipped * attention_s;
  (model.crosses_domains(previous, rank) ? t.wait_inter_s : t.wait_intra_s) +=
      std::max(0.0, last_round_s - now_s - skipped * attention_s);
  const std::pair<double, double>& last_send = accounts.last_send[static_cast<size_t>(rank)];
  t.send_s += skipped * last_send.first;  // in the steady state all alike
  t.overlapped_s += skipped * last_send.second;
}

std::vector<double> replay_values(double transfers, const std::vector<double>& finish_s, const RankAccounts& accounts,
                                  const std::vector<double>& phase_s, const model::DecodePlan& plan) {
  std::string stuck;
  for (size_t rank = 0; rank < finish_s.size(); ++rank) {
    if (finish_s[rank] < 0) stuck += (stuck.empty() ? "" : ", ") + std::to_string(plan.gpus[rank]);
  }
  if (!stuck.empty()) throw std::runtime_error("deadlock: GPUs " + stuck + " never finished (waiting to receive)");
  const size_t phases = plan.phases.size();
  std::vector<double> values{transfers};
  values.insert(values.end(), finish_s.begin(), finish_s.end());
  const size_t critical = static_cast<size_t>(std::max_element(finish_s.begin(), finish_s.end()) - finish_s.begin());
  const RankTimes& t = accounts.totals[critical];
  values.insert(values.end(),
                {double(critical), t.compute_s, t.wait_intra_s, t.wait_inter_s, t.collective_s, t.send_s, t.overlapped_s});
  values.insert(values.end(), phase_s.begin() + static_cast<std::ptrdiff_t>(critical * phases),
                phase_s.begin() + static_cast<std::ptrdiff_t>((critical + 1) * phases));
  for (const Activity& a : accounts.activities) {
    values.insert(values.end(),
                  {double(a.rank), double(static_cast<int>(a.kind)), a.start_s, a.end_s, double(a.peer), double(a.phase)});
  }
  return values;
}

}  // namespace treering::sim::detail
