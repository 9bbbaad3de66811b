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
// them solved by least squares, the best whose unknowns all come out >= 0 kept (at most 7 columns: 127 subsets; the
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

// min over f >= 0 of sum_i huber(left_i - f u_i) (u_i > 0; the residuals are relative errors): squares within the
// threshold h, absolute values beyond, so a few runs' fixed work is their least-squares fit while they agree, and a run
// far outside the prior's band pulls it no harder than one at h. The root of sum_i u_i clamp(left_i - f u_i, -h, h),
// which falls with f, by bisection between 0 and the largest run's own fixed work left_i / u_i. h is Huber's usual
// 1.345 residual scales (95 % of least squares' efficiency on normal residuals), the scale read from the prior's band
// as the runs' 90th-percentile |error| (1.645 scales): h = 1.345 / 1.645 x band; vllm-rocm's 23.2 %: h = 19.0 %. A
// prior claiming no band (0) leaves nothing to scale h by: least squares then. Where the loss is flat (every residual
// clamped) the lowest root is returned.
// E.g. equal u_i = 100 /s, runs' own fixed work 1.0, 1.2 and 4.0 ms (residuals at f: 0.1 - 100 f, 0.12 - 100 f and
// 0.4 - 100 f) and h = 0.1: the third clamped at 0.1, (0.1 - 100 f) + (0.12 - 100 f) + 0.1 = 0 gives f = 1.6 ms
// (the third's residual 0.24 > h indeed; least squares: the mean, 2.07 ms).
double fixed_by_huber_fit(const std::vector<double>& u, const std::vector<double>& left, double band) {
  const double h = 1.345 / 1.645 * band;
  if (h <= 0) return nonnegative_fit({u}, {true}, left)[0];
  const auto slope_at = [&](double f) {
    double sum = 0;
    for (std::size_t i = 0; i < u.size(); ++i) sum += u[i] * std::clamp(left[i] - f * u[i], -h, h);
    return sum;
  };
  double low = 0, high = 0;
  for (std::size_t i = 0; i < u.size(); ++i) high = std::max(high, left[i] / u[i]);
  if (slope_at(low) <= 0) return 0.0;  // the fit wants no fixed work (or less than none)
  for (int halving = 0; halving < 200 && high - low > 1e-15; ++halving) {
    const double middle = 0.5 * (low + high);
    (slope_at(middle) > 0 ? low : high) = middle;
  }
  return 0.5 * (low + high);
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
    p.attention_s = step.breakdown.attention_s;
    const double rated_Bps = layouts.cp_model(0).slowest_rates().hbm_rated_Bps;
    p.paged_v1_at_rated_s = step.paged_attention.v1_bytes * step.paged_attention.v1_occupancy_scale / rated_Bps;
    p.paged_v2_at_rated_s = step.paged_attention.v2_bytes / rated_Bps;
    p.tp_collectives = step.tp_collectives;
    p.layers = w.layers;
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

// 1 / an efficiency the loader accepts for a PagedAttention kernel (kPagedEfficiencyMin-Max); 0 (the term not
// chosen) is none: the kernels' time is never free.
bool credible_paged(double inverse_efficiency) {
  return inverse_efficiency >= 1.0 / topologies::kPagedEfficiencyMax &&
         inverse_efficiency <= 1.0 / topologies::kPagedEfficiencyMin;
}

// More than 1 ms for each TP collective, or each layer, is no collective's latency or layer's kernels but other work
// misread.
bool credible_per_collective_or_layer(double seconds) { return seconds <= 1e-3; }

// The fit's columns (fit_engine_step), per run: r = (m - x) / m, x the prediction without the engine's work (and, where
// the prior decodes with PagedAttention, without the model's attention, which those kernels replace); u = n / m,
// v = n B / m, g = d F / m, paged_v1 = d R1 / m, paged_v2 = d R2 / m, k = d C / m (C: the step's TP collectives),
// l = d L / m (L: the model's layers).
struct FitColumns {
  std::vector<double> r, u, v, g, paged_v1, paged_v2, k, l;
  std::vector<double> gemm_per_sequence;  // F / B
  bool several_batches = false;
  bool several_collective_counts = false;  // runs of different models or TP 1 beside TP > 1: k is not u scaled
  // l apart from u and, at TP > 1 where C = 2 L + 1 (k ~ 2 l + u), from k: models of different depths on one GPU,
  // or one depth on one GPU beside several at TP > 1 (fixed + a L1 on one GPU; fixed + c and a + 2 c from the
  // others: three equations, three unknowns). Without a run on one GPU the layers' and collectives' costs trade.
  bool layers_apart = false;
};

FitColumns fit_columns(const topologies::ClusterSpec& spec, const topologies::ImplProfile& before,
                       const std::vector<EngineRun>& runs) {
  const bool paged = before.engine_step && before.engine_step->paged_attention;
  topologies::ImplProfile bare = before;  // no engine work; its PagedAttention kernels kept (their occupancy)
  bare.engine_step.reset();
  if (paged)
    bare.engine_step = topologies::EngineStep{0.0, 0.0, 0.0, "", before.engine_step->paged_attention, 0.0, 0.0};
  FitColumns c;
  std::set<int> batches, collective_counts, depths_one_gpu, depths_tp;
  for (const EngineRun& run : runs) {
    const double m = run.measured_s;
    const double n = static_cast<double>(run.engine_steps());
    const EnginePrediction bare_run = predict_engine_run(spec, bare, run);
    const double decode_steps = run.benchmark == "latency" ? n - 1 : n;  // the prefill has no GEMM or decode kernel
    c.u.push_back(n / m);
    c.v.push_back(n * run.batch / m);
    c.g.push_back(decode_steps * bare_run.gemm_flops_at_peak_s / m);
    c.paged_v1.push_back(decode_steps * bare_run.paged_v1_at_rated_s / m);
    c.paged_v2.push_back(decode_steps * bare_run.paged_v2_at_rated_s / m);
    c.k.push_back(decode_steps * bare_run.tp_collectives / m);
    c.l.push_back(decode_steps * bare_run.layers / m);
    c.gemm_per_sequence.push_back(bare_run.gemm_flops_at_peak_s / run.batch);
    const double without = bare_run.predicted_s - (paged ? decode_steps * bare_run.attention_s : 0.0);
    c.r.push_back((m - without) / m);
    batches.insert(run.batch);
    collective_counts.insert(bare_run.tp_collectives);
    (bare_run.tp_collectives == 0 ? depths_one_gpu : depths_tp).insert(bare_run.layers);
  }
  c.several_batches = batches.size() > 1;
  c.several_collective_counts = collective_counts.size() > 1;
  c.layers_apart = depths_one_gpu.size() > 1 || (depths_one_gpu.size() == 1 && depths_tp.size() > 1);
  return c;
}

// A term held at `coefficient`: its part taken out of what the fitted terms explain.
void hold(std::vector<double>& left, const std::vector<double>& column, double coefficient) {
  for (std::size_t i = 0; i < left.size(); ++i) left[i] -= coefficient * column[i];
}

// Which terms beyond the fixed and per-sequence work the runs fit (the others held at the prior's, or none).
struct FreeTerms {
  bool gemm = false, paged = false, collectives = false, layers = false;
};

// The columns' unknowns x by nonnegative least squares on `left`, a GEMM, per-collective or per-layer term at no
// credible value dropped (`allowed` cleared) and the rest refitted.
std::vector<double> credible_fit(const std::vector<std::vector<double>>& columns, std::vector<bool>& allowed,
                                 const std::vector<double>& left) {
  std::vector<double> x = nonnegative_fit(columns, allowed, left);
  for (;;) {
    const bool gemm = x[2] > 0 && !credible_gemm(x[2]);
    const bool collective = x[5] > 0 && !credible_per_collective_or_layer(x[5]);
    const bool layer = x[6] > 0 && !credible_per_collective_or_layer(x[6]);
    if (!gemm && !collective && !layer) return x;
    allowed[gemm ? 2 : collective ? 5 : 6] = false;
    x = nonnegative_fit(columns, allowed, left);
  }
}

// Fixed, per sequence and the `free` terms (GEMM, the PagedAttention kernels', per collective, per layer) by
// nonnegative least squares on `left`: a GEMM, per-collective or per-layer term at no credible value is dropped, a
// kernel's held at the prior's (fit.step.paged_attention), and the rest refitted.
void fit_free_terms(const FitColumns& c, const FreeTerms& free, std::vector<double> left, EngineStepFit& fit) {
  const std::vector<std::vector<double>> columns{c.u, c.v, c.g, c.paged_v1, c.paged_v2, c.k, c.l};
  std::vector<bool> allowed{true, c.several_batches, free.gemm, free.paged, free.paged, free.collectives, free.layers};
  std::vector<double> x = credible_fit(columns, allowed, left);
  for (bool refit = free.paged; refit;) {  // each kernel held at most once: two rounds at most
    refit = false;
    const topologies::PagedAttention& prior = *fit.step.paged_attention;
    const double prior_inverse[2] = {1.0 / prior.v1_bandwidth_efficiency, 1.0 / prior.v2_bandwidth_efficiency};
    for (std::size_t k = 3; k <= 4; ++k) {
      if (!allowed[k] || credible_paged(x[k])) continue;
      hold(left, columns[k], prior_inverse[k - 3]);
      allowed[k] = false;
      refit = true;
    }
    if (refit) x = credible_fit(columns, allowed, left);
  }
  fit.step.fixed_s = x[0];
  fit.step.per_sequence_s = x[1];
  fit.step.gemm_flop_efficiency = x[2] > 0 ? 1.0 / x[2] : 0.0;
  fit.per_sequence_fitted = x[1] > 0;
  fit.gemm_fitted = x[2] > 0;
  fit.step.per_collective_s = x[5];
  fit.per_collective_fitted = x[5] > 0;
  fit.step.per_layer_s = x[6];
  fit.per_layer_fitted = x[6] > 0;
  fit.paged_v1_fitted = free.paged && allowed[3];
  fit.paged_v2_fitted = free.paged && allowed[4];
  if (fit.paged_v1_fitted) fit.step.paged_attention->v1_bandwidth_efficiency = 1.0 / x[3];
  if (fit.paged_v2_fitted) fit.step.paged_attention->v2_bandwidth_efficiency = 1.0 / x[4];
}

// From kRunsToFitSlope runs (or a prior without slopes): every term the runs can tell apart fitted; a prior's term
// that they cannot tell from the others (one GEMM size a sequence, one collective count, one depth) held, not dropped.
void fit_many(const FitColumns& c, const topologies::ImplProfile& before, bool few, std::vector<double> left,
              EngineStepFit& fit) {
  const std::optional<topologies::EngineStep>& prior = before.engine_step;
  fit.step.paged_attention = prior ? prior->paged_attention : std::nullopt;
  FreeTerms free;
  free.gemm = !few && gemm_apart_from_batch(c.gemm_per_sequence);
  free.paged = fit.step.paged_attention && !few;
  free.collectives = !few && c.several_collective_counts;
  free.layers = !few && c.layers_apart;
  const double prior_gemm_efficiency = prior ? prior->gemm_flop_efficiency : 0.0;
  const double prior_per_collective_s = prior ? prior->per_collective_s : 0.0;
  const double prior_per_layer_s = prior ? prior->per_layer_s : 0.0;
  if (!free.gemm && prior_gemm_efficiency > 0) hold(left, c.g, 1.0 / prior_gemm_efficiency);
  if (!free.collectives) hold(left, c.k, prior_per_collective_s);
  if (!free.layers) hold(left, c.l, prior_per_layer_s);
  fit_free_terms(c, free, left, fit);
  fit.gemm_from_prior = !free.gemm && prior_gemm_efficiency > 0;
  if (fit.gemm_from_prior) fit.step.gemm_flop_efficiency = prior_gemm_efficiency;
  fit.per_collective_from_prior = !free.collectives && prior_per_collective_s > 0;
  if (fit.per_collective_from_prior) fit.step.per_collective_s = prior_per_collective_s;
  fit.per_layer_from_prior = !free.layers && prior_per_layer_s > 0;
  if (fit.per_layer_from_prior) fit.step.per_layer_s = prior_per_layer_s;
}

}  // namespace

EngineStepFit fit_engine_step(const topologies::ClusterSpec& spec, const topologies::ImplProfile& before,
                              const std::vector<EngineRun>& runs) {
  if (runs.empty()) throw topologies::InputError("no engine runs to fit");
  const FitColumns c = fit_columns(spec, before, runs);
  const std::optional<topologies::PagedAttention> prior_paged =
      before.engine_step ? before.engine_step->paged_attention : std::nullopt;
  const bool few = runs.size() < kRunsToFitSlope;
  const bool keep_slope = few && before.engine_step &&
                          (before.engine_step->per_sequence_s > 0 || before.engine_step->gemm_flop_efficiency > 0 ||
                           before.engine_step->per_collective_s > 0 || before.engine_step->per_layer_s > 0);
  EngineStepFit fit;
  std::vector<double> left = c.r;  // what the engine's terms explain, less the terms held at the prior's
  if (prior_paged && few) {
    hold(left, c.paged_v1, 1.0 / prior_paged->v1_bandwidth_efficiency);
    hold(left, c.paged_v2, 1.0 / prior_paged->v2_bandwidth_efficiency);
  }
  if (keep_slope) {  // the prior's slopes held: the fixed work alone fits what is left
    fit.step = *before.engine_step;
    const double gemm = fit.step.gemm_flop_efficiency > 0 ? 1.0 / fit.step.gemm_flop_efficiency : 0.0;
    hold(left, c.v, fit.step.per_sequence_s);
    hold(left, c.g, gemm);
    hold(left, c.k, fit.step.per_collective_s);
    hold(left, c.l, fit.step.per_layer_s);
    fit.step.fixed_s = fixed_by_huber_fit(c.u, left, before.uncertainty.compute);
    fit.per_sequence_from_prior = true;
  } else {
    fit_many(c, before, few, left, fit);
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
