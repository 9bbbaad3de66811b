// Serving engines' latency runs, predicted and fitted (engine_fit.hpp).
#include "treering/validate/engine_fit.hpp"

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

// min over x >= 0 of sum (r - x t)^2
double one_unknown(const std::vector<double>& t, const std::vector<double>& r) {
  double tt = 0, tr = 0;
  for (std::size_t i = 0; i < t.size(); ++i) tt += t[i] * t[i], tr += t[i] * r[i];
  return std::max(0.0, tr / tt);
}

// min over a, b >= 0 of sum (r - a u - b v)^2 (fit_engine_step): the 2 x 2 normal equations, a negative unknown
// held at 0 and the other refitted; `several_batches` false fits a alone. True when b was fitted.
bool fit_two(const std::vector<double>& u, const std::vector<double>& v, const std::vector<double>& r,
             bool several_batches, double& a, double& b) {
  a = one_unknown(u, r), b = 0;
  if (!several_batches) return false;
  double uu = 0, uv = 0, vv = 0, ur = 0, vr = 0;
  for (std::size_t i = 0; i < u.size(); ++i)
    uu += u[i] * u[i], uv += u[i] * v[i], vv += v[i] * v[i], ur += u[i] * r[i], vr += v[i] * r[i];
  const double det = uu * vv - uv * uv;
  const double a2 = (ur * vv - vr * uv) / det, b2 = (uu * vr - uv * ur) / det;
  if (det > 0 && a2 >= 0 && b2 >= 0) {
    a = a2, b = b2;
    return true;
  }
  if (det > 0 && a2 < 0 && b2 > 0) {
    a = 0, b = one_unknown(v, r);
    return true;
  }
  return false;
}

}  // namespace

EnginePrediction predict_engine_run(const topologies::ClusterSpec& spec, const topologies::ImplProfile& profile,
                                    const EngineRun& run) {
  const topologies::Topology topology(spec);
  model::Workload w = model::find_workload(run.workload);
  w.batch = run.batch;
  const model::LayoutModel layouts(topology, model::place_layout(topology, model::Layout{run.tp, 1}));
  const auto with_engine = std::make_shared<const topologies::ImplProfile>(profile);
  topologies::ImplProfile bare_profile = profile;
  bare_profile.engine_step.reset();
  const auto bare = std::make_shared<const topologies::ImplProfile>(bare_profile);

  EnginePrediction p;
  p.decode_steps = run.output_len - 1;
  p.middle_context = run.input_len + run.output_len / 2;
  p.engine_step_s = profile.engine_step ? profile.engine_step->step_s(run.batch) : 0.0;
  p.step_s = p.decode_steps > 0 ? step_s(layouts, w, p.middle_context, with_engine) : 0.0;
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
  p.prefill_s = std::max(step_s(layouts, w, run.input_len, bare), compute_s) + p.engine_step_s;
  // step: the median decode step, the middle one where the step grows with the context
  p.predicted_s = run.benchmark == "step" ? p.step_s : p.prefill_s + static_cast<double>(p.decode_steps) * p.step_s;
  return p;
}

EngineStepFit fit_engine_step(const topologies::ClusterSpec& spec, const topologies::ImplProfile& before,
                              const std::vector<EngineRun>& runs) {
  if (runs.empty()) throw topologies::InputError("no engine runs to fit");
  topologies::ImplProfile bare = before;
  bare.engine_step.reset();
  // r_i = (m - x) / m = a u_i + b v_i with u_i = n / m, v_i = n B / m: the relative error is r - a u - b v.
  std::vector<double> u, v, r;
  std::set<int> batches;
  EngineStepFit fit;
  for (const EngineRun& run : runs) {
    const double m = run.measured_s;
    const double n = static_cast<double>(run.engine_steps());
    u.push_back(n / m);
    v.push_back(n * run.batch / m);
    r.push_back((m - predict_engine_run(spec, bare, run).predicted_s) / m);
    batches.insert(run.batch);
  }
  double a = 0, b = 0;
  const bool keep_slope = runs.size() < kRunsToFitSlope && before.engine_step && before.engine_step->per_sequence_s > 0;
  if (keep_slope) {  // the prior's slope held: the fixed work alone fits what is left
    b = before.engine_step->per_sequence_s;
    std::vector<double> left = r;
    for (std::size_t i = 0; i < left.size(); ++i) left[i] -= b * v[i];
    a = one_unknown(u, left);
    fit.per_sequence_from_prior = true;
  } else {
    fit.per_sequence_fitted = fit_two(u, v, r, batches.size() > 1, a, b);
  }
  fit.step.fixed_s = a;
  fit.step.per_sequence_s = b;
  topologies::ImplProfile after = before;
  after.engine_step = fit.step;
  for (const EngineRun& run : runs) {
    fit.errors_before.push_back(relative_error(predict_engine_run(spec, before, run).predicted_s, run.measured_s));
    fit.errors_after.push_back(relative_error(predict_engine_run(spec, after, run).predicted_s, run.measured_s));
  }
  return fit;
}

}  // namespace treering::validate
