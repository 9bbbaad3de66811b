// Calibrating a cluster from benchmarks (calibration_runs.hpp): collectives and send/recv fit the network,
// attention benchmarks the compute model, decode steps the step's parts.
#include <algorithm>

#include "treering/analysis/calibration_runs.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/validate/decodes.hpp"

namespace treering::analysis {
namespace {

struct BenchmarkFiles {
  std::vector<validate::CollectiveMeasurement> collectives, sends;
  std::vector<std::string> attention;
};

BenchmarkFiles sort_benchmark_files(const std::vector<std::string>& files) {
  BenchmarkFiles sorted;
  for (const std::string& file : files) {
    if (validate::is_step_file(file)) continue;
    if (validate::is_attention_file(file)) {
      sorted.attention.push_back(file);
      continue;
    }
    for (const validate::CollectiveMeasurement& row : validate::read_collective_measurements(file)) {
      (row.op == model::CollectiveOp::sendrecv ? sorted.sends : sorted.collectives).push_back(row);
    }
  }
  return sorted;
}

// One HBM efficiency and launch overhead for every kernel, then a line per kernel shape where the GPU's
// multiprocessors are known (the kernel's chunks depend on them).
void fit_attention(const topologies::ClusterSpec& spec, BenchmarkCalibration& result) {
  topologies::Calibration& calibration = result.network.fit.calibration;
  const std::vector<validate::AttentionMeasurement>& kernels = result.kernels;
  result.compute = validate::fit_compute(spec, kernels);
  const auto [fewest, most] = std::minmax_element(kernels.begin(), kernels.end(),
                                                  [](const auto& a, const auto& b) { return a.tokens < b.tokens; });
  calibration.provenance.tokens = std::pair{fewest->tokens, most->tokens};
  calibration.hbm_efficiency = result.compute->hbm_efficiency;
  calibration.launch_overhead_s = result.compute->launch_overhead_s;
  const topologies::GpuModel& gpu = spec.gpu_models.at(spec.groups.front().gpu_model);
  if (gpu.multiprocessors < 1) {
    result.notes.push_back("attention not fitted by shape: gpu model '" + gpu.name +
                           "' has no 'multiprocessors' (set it, e.g. --set gpu_models." + gpu.name +
                           ".multiprocessors=132)");
    return;
  }
  result.attention_fits = validate::fit_attention_shapes(spec, kernels);
  double worst = 0;
  for (const validate::AttentionShapeFit& f : result.attention_fits) {
    calibration.attention_shapes.push_back(f.line);
    worst = std::max(worst, f.max_abs_rel_error);
  }
  calibration.provenance.attention_max_abs_rel_error = worst;  // the compute band of predictions on this calibration
}

}  // namespace

BenchmarkCalibration calibrate_benchmarks(const BenchmarkCalibrationRequest& request) {
  BenchmarkCalibration result;
  result.steps = read_one_gpu_steps(request.files, true, result.notes);
  const BenchmarkFiles files = sort_benchmark_files(request.files);
  if (!request.tokens.empty() && files.attention.empty())
    throw topologies::InputError("--tokens selects attention benchmarks, and none was given");
  if (!files.attention.empty()) result.kernels = read_attention_files(files.attention, request.tokens);
  result.collectives = files.collectives.size();
  result.sends = files.sends.size();
  result.network = calibrate_network(request.spec, files.collectives, files.sends, request.files);
  if (!result.kernels.empty()) fit_attention(request.spec, result);
  if (!result.steps.empty()) {
    result.step_fit = validate::fit_step(request.spec, result.steps);
    result.network.fit.calibration.step = result.step_fit->parts;
    result.network.fit.calibration.step_attention_shapes = result.step_fit->attention_shapes;
  }
  result.cluster_yaml = validate::with_calibration(request.base_yaml, result.network.fit.calibration);
  topologies::load_cluster_text(result.cluster_yaml, request.output_name);  // what is written must load
  return result;
}

}  // namespace treering::analysis
