// Measured collectives (nccl-tests logs, CSVs, treering-realrun bench JSON) and timed decodes (treering-realrun
// decode JSON) beside the model's and the simulator's predictions, case by case, with the median, p90 and max
// error per engine and operation: what `treering validate` prints for them and the Python module's validate()
// returns. (Attention benchmarks and decode steps have their own reports: attention_reports, step_reports.)
#pragma once

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

// The report as `validate --format json` writes it: cases (collectives, then decodes) and summary.
nlohmann::ordered_json validate_json(const topologies::Topology& topology, const ValidateReport& report);

}  // namespace treering::analysis
