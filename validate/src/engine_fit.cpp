// Serving engines' latency runs, predicted and fitted (engine_fit.hpp).
#include "treering/validate/engine_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "treering/model/decode.hpp"
#include "treering/model/layout_model.hpp"
#include "treering/model/statistics.hpp"
#include "treering/model/step.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/topologies/units.hpp"

namespace treering::validate {
namespace {

model::StepResult step_at(const model::LayoutModel& layouts, const model::Workload& w, long long context,
                          const std::shared_ptr<const topologies::ImplProfile>& impl) {
  model::PlanOptions options;
  options.impl = impl;
  const model::LayoutAttention attention = layouts.attention(model::DecodeAlgorithm::tree, w, context, options);
  return model::evaluate_step(layouts, attention, model::DecodeAlgorithm::tree, w, context, model::Scope::step);
}

double step_s(const model::LayoutModel& layouts, const model::Workload& w, long long context,
              const std::shared_ptr<const topologies::ImplProfile>& impl) {
  return step_at(layouts, w, context, impl).step_s;
}

// Why the batch's KV cache at its last token does not fit beside the weights in kEngineMemoryFraction of a GPU less
// kEngineWorkspaceBytes (engine_fit.hpp), or "" when it does.
std::string memory_shortfall(const model::LayoutModel& layouts, const model::Workload& w, const EngineRun& run,
                             const std::shared_ptr<const topologies::ImplProfile>& impl) {
  const model::StepMemory m = step_at(layouts, w, run.input_len + run.output_len, impl).memory;
  const double usable = kEngineMemoryFraction * m.capacity - kEngineWorkspaceBytes;
  if (m.total <= usable) return "";
  return "needs " + topologies::format_bytes(m.total) + " a GPU at its last token (KV cache " +
         topologies::format_bytes(m.kv_cache) + ", weights " + topologies::format_bytes(m.weights) + "), over " +
         topologies::format_bytes(usable) + " (90 % of " + topologies::format_bytes(m.capacity) +
         ", less 1 GB of workspace): the engine queues or preempts sequences";
}

// The prefill's FLOPs (engine_fit.hpp): weights and causal attention over every prompt.
double prefill_flops(const model::Workload& w, long long prompt_tokens) {
  const double n = static_cast<double>(prompt_tokens);
  return w.batch * (2.0 * w.parameters * n + 2.0 * w.layers * n * n * w.query_heads * w.head_dim);
}

double relative_error(double predicted, double measured) { return (predicted - measured) / measured; }

// min over x >= 0 of |r - sum_j x_j columns[j]|^2 over the columns `allowed` (the others held at 0): every subset of
// them solved by least squares, the best whose unknowns all come out >= 0 kept (at most 3 columns: 7 subsets; the
// optimum is the least-squares solution on its own nonzero columns, so it is among them).
std::vector<double> nonnegative_fit(const std::vector<std::vector<double>>& columns, const std::vector<bool>& allowed,
                                    const std::vector<double>& r) {
  const std::size_t k = columns.size();
  std::vector<double> best(k, 0.0);
  double best_residual = 0;
  for (double value : r) best_residual += value * value;  // all zero
  const Eigen::Map<const Eigen::VectorXd> target(r.data(), static_cast<Eigen::Index>(r.size()));
  for (unsigned subset = 1; subset < (1u << k); ++subset) {
    std::vector<std::size_t> chosen;
    bool possible = true;
    for (std::size_t j = 0; j < k; ++j) {
      if ((subset >> j & 1u) == 0) continue;
      possible = possible && allowed[j];
      chosen.push_back(j);
    }
    if (!possible) continue;
    const auto rows = static_cast<Eigen::Index>(r.size());
    Eigen::MatrixXd a(rows, static_cast<Eigen::Index>(chosen.size()));
    for (std::size_t c = 0; c < chosen.size(); ++c) {
      for (Eigen::Index i = 0; i < rows; ++i) a(i, static_cast<Eigen::Index>(c)) = columns[chosen[c]][i];
    }
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
    if (qr.rank() < static_cast<Eigen::Index>(chosen.size())) continue;
    const Eigen::VectorXd x = qr.solve(target);
    if ((x.array() < 0).any()) continue;
    const double residual = (target - a * x).squaredNorm();
    if (residual >= best_residual) continue;
    best_residual = residual;
    std::fill(best.begin(), best.end(), 0.0);
    for (std::size_t c = 0; c < chosen.size(); ++c) best[chosen[c]] = x(static_cast<Eigen::Index>(c));
  }
  return best;
}

}  // namespace

EnginePrediction predict_engine_run(const topologies::ClusterSpec& spec, const topologies::ImplProfile& profile,
                                    const EngineRun& run) {
  const topologies::Topology topology(spec);
  model::Workload w = model::find_workload(run.workload);
  w.batch = run.batch;
  w.identical_sequences = run.identical_sequences;
  const model::LayoutModel layouts(topology, model::place_layout(topology, model::Layout{run.tp, 1}));
  const auto with_engine = std::make_shared<const topologies::ImplProfile>(profile);
  topologies::ImplProfile bare_profile = profile;
  bare_profile.engine_step.reset();
  const auto bare = std::make_shared<const topologies::ImplProfile>(bare_profile);

  EnginePrediction p;
  p.decode_steps = run.output_len - 1;
  p.middle_context = run.input_len + run.output_len / 2;
  const double host_s = profile.engine_step ? profile.engine_step->step_s(run.batch) : 0.0;  // the prefill's
  p.engine_step_s = host_s;
  if (p.decode_steps > 0) {
    const model::StepResult step = step_at(layouts, w, p.middle_context, with_engine);
    p.step_s = step.step_s;
    p.engine_step_s = step.breakdown.engine_s;
    p.gemm_flops_at_peak_s = step.gemm_flops_at_peak_s;
  }
  p.memory_shortfall = memory_shortfall(layouts, w, run, bare);
  const double peak_flops = run.tp * layouts.cp_model(0).slowest_rates().peak_flops * model::kPrefillEfficiency;
  if (run.benchmark == "serve") {
    // One prompt's prefill, run inside a decode step of the others: (C - 1) / (output_len - 1) of them a step.
    model::Workload one = w;
    one.batch = 1;
    p.prefill_s = prefill_flops(one, run.input_len) / peak_flops;
    const double with_prefill = (run.batch - 1.0) / static_cast<double>(p.decode_steps);  // of the steps
    p.predicted_s = p.step_s + with_prefill * p.prefill_s;
    p.ttft_s = 1.5 * p.step_s + p.prefill_s;
    p.median_itl_s = p.step_s + (with_prefill >= 0.5 ? p.prefill_s : 0.0);
    p.p99_itl_s = p.step_s + (with_prefill >= 0.01 ? p.prefill_s : 0.0);
    return p;
  }
  const double compute_s = prefill_flops(w, run.input_len) / peak_flops;
  model::Workload prompts = w;  // a prompt's tokens sit at different positions: they route apart, identical or not
  prompts.identical_sequences = false;
  p.prefill_s = std::max(step_s(layouts, prompts, run.input_len, bare), compute_s) + host_s;
  // step: the median decode step, the middle one where the step grows with the context
  p.predicted_s = run.benchmark == "step" ? p.step_s : p.prefill_s + static_cast<double>(p.decode_steps) * p.step_s;
  return p;
}

namespace {

// Whether the runs' GEMM FLOPs a sequence (one decode step's at the GPU's peak, over the batch) differ by more than
// 1 % (several models or TP degrees), so that the GEMM term is not the per-sequence one scaled.
bool gemm_apart_from_batch(const std::vector<double>& gemm_per_sequence) {
  const auto [low, high] = std::minmax_element(gemm_per_sequence.begin(), gemm_per_sequence.end());
  return *high > 1.01 * *low;
}

// 1 / gemm_flop_efficiency the profile loader accepts (an efficiency in [1e-4, 1]): outside it the GEMM term is not
// a GEMM library's rate but other work misread (over the peak: the per-sequence or fixed work; under 1e-4: absurd).
bool credible_gemm(double inverse_efficiency) { return inverse_efficiency >= 1.0 && inverse_efficiency <= 1e4; }

}  // namespace

EngineStepFit fit_engine_step(const topologies::ClusterSpec& spec, const topologies::ImplProfile& before,
                              const std::vector<EngineRun>& runs) {
  if (runs.empty()) throw topologies::InputError("no engine runs to fit");
  topologies::ImplProfile bare = before;
  bare.engine_step.reset();
  // r_i = (m - x) / m = a u_i + b v_i + c g_i with u_i = n / m, v_i = n B / m, g_i = d F / m (F: one decode step's
  // GEMM FLOPs at the GPU's peak, d its decode steps, c = 1 / gemm_flop_efficiency): the error is r - a u - b v - c g.
  std::vector<double> u, v, g, r, gemm_per_sequence;
  std::set<int> batches;
  EngineStepFit fit;
  for (const EngineRun& run : runs) {
    const double m = run.measured_s;
    const double n = static_cast<double>(run.engine_steps());
    const EnginePrediction bare_run = predict_engine_run(spec, bare, run);
    u.push_back(n / m);
    v.push_back(n * run.batch / m);
    const double decode_steps = run.benchmark == "latency" ? n - 1 : n;  // the prefill has no GEMM term
    g.push_back(decode_steps * bare_run.gemm_flops_at_peak_s / m);
    gemm_per_sequence.push_back(bare_run.gemm_flops_at_peak_s / run.batch);
    r.push_back((m - bare_run.predicted_s) / m);
    batches.insert(run.batch);
  }
  const bool few = runs.size() < kRunsToFitSlope;
  const bool keep_slope = few && before.engine_step &&
                          (before.engine_step->per_sequence_s > 0 || before.engine_step->gemm_flop_efficiency > 0);
  if (keep_slope) {  // the prior's slopes held: the fixed work alone fits what is left
    fit.step = *before.engine_step;
    std::vector<double> left = r;
    const double c = fit.step.gemm_flop_efficiency > 0 ? 1.0 / fit.step.gemm_flop_efficiency : 0.0;
    for (std::size_t i = 0; i < left.size(); ++i) left[i] -= fit.step.per_sequence_s * v[i] + c * g[i];
    fit.step.fixed_s = nonnegative_fit({u}, {true}, left)[0];
    fit.per_sequence_from_prior = true;
  } else {
    const bool with_gemm = !few && gemm_apart_from_batch(gemm_per_sequence);
    std::vector<double> x = nonnegative_fit({u, v, g}, {true, batches.size() > 1, with_gemm}, r);
    if (x[2] > 0 && !credible_gemm(x[2])) x = nonnegative_fit({u, v, g}, {true, batches.size() > 1, false}, r);
    fit.step.fixed_s = x[0];
    fit.step.per_sequence_s = x[1];
    fit.step.gemm_flop_efficiency = x[2] > 0 ? 1.0 / x[2] : 0.0;
    fit.per_sequence_fitted = x[1] > 0;
    fit.gemm_fitted = x[2] > 0;
  }
  topologies::ImplProfile after = before;
  after.engine_step = fit.step;
  for (const EngineRun& run : runs) {
    fit.errors_before.push_back(relative_error(predict_engine_run(spec, before, run).predicted_s, run.measured_s));
    fit.errors_after.push_back(relative_error(predict_engine_run(spec, after, run).predicted_s, run.measured_s));
  }
  return fit;
}

}  // namespace treering::validate
