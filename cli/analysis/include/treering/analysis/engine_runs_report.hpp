// Serving engines' benchmarks (validate/engine_runs.hpp) for the front ends: `treering validate` predicts each run
// like for like with an implementation profile; `treering calibrate` fits the profile's engine work a step
// (validate/engine_fit.hpp) and writes the fitted profile. No printing: cli/src reports.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/validate/engine_fit.hpp"
#include "treering/validate/engine_runs.hpp"

namespace treering::analysis {

// True when every file is a serving engine's benchmark; false when none is. Throws topologies::InputError when
// they mix with other measurements (one kind per run).
bool engine_benchmark_files(const std::vector<std::string>& files);

struct EngineRunCase {
  validate::EngineRun run;
  validate::EnginePrediction predicted;
  double rel_error = 0;  // (predicted - measured) / measured
  // Why the run's own sweep contradicts it (validate::contradicted_runs), or "".
  std::string contradiction;
};

struct EngineValidation {
  topologies::ImplProfile profile;
  std::vector<EngineRunCase> cases;
  std::vector<EngineRunCase> not_fitting;  // runs whose batch does not fit in memory (memory_shortfall): not predicted
  // Runs a larger run of the same setup took less time than (validate::contradicted_runs): predicted, listed, and
  // kept out of the figures below, which measure the model against steady-state measurements.
  std::vector<EngineRunCase> contradicted;
  double median_abs_rel_error = 0;
  // The profile's band (its compute uncertainty, a relative error either side) and how many cases fall inside it.
  double band = 0;
  int inside_band = 0;
};

// Every run of `files` predicted on `spec` with `profile`; the figures over those that fit in memory and that their
// sweep does not contradict.
EngineValidation validate_engine_runs(const topologies::ClusterSpec& spec, const topologies::ImplProfile& profile,
                                      const std::vector<std::string>& files);
nlohmann::ordered_json engine_validation_json(const EngineValidation& validation);

struct EngineCalibration {
  std::vector<validate::EngineRun> not_fitting;  // left out of the fit: their batch does not fit in memory
  std::vector<EngineRunCase> contradicted;       // left out of the fit: a larger run of their setup was faster
  topologies::ImplProfile prior;
  topologies::ImplProfile fitted;  // the prior with the fitted engine_step (its source names the runs and errors)
  validate::EngineStepFit fit;
  std::vector<validate::EngineRun> runs;
  std::string profile_yaml;  // the fitted profile, with a comment naming its inputs (checked to load)
};

// Fits `prior`'s engine work a step to the runs of `files` on `spec` (but those that do not fit in memory and those
// their sweep contradicts); `output_name` for messages.
EngineCalibration calibrate_engine(const topologies::ClusterSpec& spec, const topologies::ImplProfile& prior,
                                   const std::vector<std::string>& files, const std::string& output_name);
nlohmann::ordered_json engine_calibration_json(const EngineCalibration& calibration);

}  // namespace treering::analysis
