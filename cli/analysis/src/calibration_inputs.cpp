// Which kind of calibration files make, and reading the step and attention files (calibration_runs.hpp).
#include <algorithm>

#include "treering/analysis/calibration_runs.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/decode_timings.hpp"
#include "treering/validate/decodes.hpp"

namespace treering::analysis {

bool is_timings_file(const std::string& path) {
  return validate::is_decode_timings_csv(path) || validate::is_decode_file(path);
}

CalibrationKind calibration_kind(const std::vector<std::string>& files) {
  const auto timings = std::count_if(files.begin(), files.end(), is_timings_file);
  if (timings == 0) return CalibrationKind::benchmarks;
  if (timings != static_cast<long>(files.size())) {
    throw topologies::InputError(
        "calibrate timed decodes (they fit a profile) and benchmarks (they fit a cluster) in separate runs");
  }
  return CalibrationKind::timed_decodes;
}

std::vector<validate::StepPoint> read_one_gpu_steps(const std::vector<std::string>& files, bool calibrating,
                                                    std::vector<std::string>& notes) {
  std::vector<validate::StepPoint> points;
  int loopback = 0, step_files = 0;
  for (const std::string& file : files) {
    if (calibrating && !validate::is_step_file(file)) continue;
    ++step_files;
    for (const validate::StepPoint& p : validate::read_step_points(file)) {
      if (p.tp == 1)
        points.push_back(p);
      else
        ++loopback;
    }
  }
  if (step_files > 0 && points.empty()) {
    throw topologies::InputError(std::string("no one-GPU steps to ") + (calibrating ? "calibrate on" : "validate") +
                                 " (" + std::to_string(loopback) +
                                 " loopback steps, tp > 1, time all their ranks on one GPU)");
  }
  if (loopback > 0)
    notes.push_back(std::to_string(loopback) +
                    " loopback steps (tp > 1) left out: they time all their ranks on one GPU");
  return points;
}

std::vector<validate::AttentionMeasurement> read_attention_files(const std::vector<std::string>& files,
                                                                 const std::vector<long long>& tokens) {
  std::vector<validate::AttentionMeasurement> kept;
  for (const std::string& file : files) {
    for (const validate::AttentionMeasurement& m : validate::read_attention_measurements(file)) {
      if (tokens.empty() || std::find(tokens.begin(), tokens.end(), m.tokens) != tokens.end()) kept.push_back(m);
    }
  }
  if (kept.empty() && !tokens.empty()) throw topologies::InputError("no attention measurement at the --tokens given");
  return kept;
}

}  // namespace treering::analysis
