// Measured collectives (nccl-tests logs, CSVs, treering-realrun bench JSON) and timed decodes (treering-realrun
// decode JSON) beside the model's and the simulator's predictions, case by case, with the median, p90 and max
// error per engine and operation: what `treering validate` prints for them and the Python module's validate()
// returns. (Attention benchmarks and decode steps have their own: kernel_validation.hpp.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "treering/topologies/topology.hpp"
#include "treering/validate/decodes.hpp"
#include "treering/validate/report.hpp"

namespace treering::analysis {

struct ValidateReport {
  std::vector<validate::CaseResult> cases;      // collectives and sends
  std::vector<validate::DecodeCase> decodes;    // timed decodes
  std::vector<validate::ErrorSummary> summary;  // per engine and operation (decodes: per algorithm)
  std::vector<std::string> warnings;            // cases outside what the cluster's calibration measured
};

// Reads every file (each a collective measurement or a decode JSON) and predicts each case with `engines`.
ValidateReport validate_measurements(const topologies::Topology& topology, const std::vector<std::string>& files,
                                     const std::vector<validate::Engine>& engines);

// "none" on a cluster without a calibration, else "inside" or "OUTSIDE *", as predict's.
std::string calibration_label(bool calibrated, const validate::DecodeCase& c);

// --max-factor: the first engine and algorithm (or operation) whose median case is predicted more than
// `max_factor` times too slow or too fast, or whose prediction or measurement is not a finite positive time, as a
// message ("model, ring: the median case is predicted 3.4x the measured time, ..."); nullopt when none is. The
// median by nearest rank, the lower middle: one case hit by a neighbour's burst does not move it.
std::optional<std::string> gross_error(const ValidateReport& report, const std::vector<validate::Engine>& engines,
                                       double max_factor);

// The report as `validate --format json` writes it: cases (collectives, then decodes) and summary.
nlohmann::ordered_json validate_json(const topologies::Topology& topology, const ValidateReport& report);

}  // namespace treering::analysis
