// The rows predict and simulate print: one schema for both engines (JSON objects, CSV columns), so that a
// program reading one reads the other.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/model/layout.hpp"
#include "treering/model/step.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/validate/report.hpp"

namespace treering::analysis {

// Where a row's figures stand against the cluster's calibration: none (nominal figures), inside what it measured,
// or extrapolated beyond it (the row's `extrapolation` says why).
enum class CalibrationState { none, inside, extrapolated };
const char* to_string(CalibrationState state);  // "none", "inside", "extrapolated": the `calibration` column

struct DecodeRow {
  model::DecodeResult result;  // the model's, or the simulator's in the same form
  validate::Engine engine = validate::Engine::model;
  std::string cluster;    // its name
  int cluster_nodes = 0;  // nodes in the cluster
  int nodes_used = 0;     // nodes the GPUs used sit on
  std::string workload;   // its name
  int batch = 1;
  std::optional<double> prefill_s;
  std::optional<double> generation_s;
  std::optional<double> model_latency_s;         // simulate: the model's figure beside the simulated one
  std::optional<long long> transfers_simulated;  // simulate
  nlohmann::ordered_json links;                  // simulate: bytes and utilisation per link (JSON only)
  // none (nominal figures), inside (the plan stays inside what the calibration measured) or extrapolated, with
  // the reasons (model/extrapolation.hpp).
  CalibrationState calibration = CalibrationState::none;
  std::string extrapolation;
  // How sure: the errors of the implementation profile or the calibration, and the bands they give.
  model::RelativeErrors errors;
  model::Band latency_band;
  std::optional<model::Band> generation_band;
  // The layout (--tp x --cp): result holds the slowest CP group's attention, its volume all groups'.
  model::Layout layout;
  model::LayoutOrder placement = model::LayoutOrder::tp_inner;
  std::optional<model::StepResult> step;  // --scope layer|step
  // Empty when the case fits in every GPU's memory, else what it needs (model::memory_shortfall's words, or the
  // step's): the row is still computed, and marked.
  std::string memory_shortfall;
};

// Sets the row's layout, GPU count and nodes used from the layout's groups.
void set_layout(DecodeRow& row, const model::LayoutGroups& groups, const topologies::Topology& topology);

// The band of row.generation_s (set), for `layers` layers and `tokens` tokens.
void set_generation_band(DecodeRow& row, int layers, long long tokens);

// Fills the row's cluster, node, workload and calibration fields for `decode`'s GPUs running `plan`.
void set_context(DecodeRow& row, const model::DecodeModel& decode, const model::DecodePlan& plan);

nlohmann::ordered_json decode_json(const DecodeRow& row);

// For tables. The line under the title: "calibration: none (nominal bandwidths x default efficiencies)" or
// "calibration: bench.json, ... (2026-11-23)". A row's marker: "inside", "OUTSIDE *" or "" (uncalibrated). The
// notes under the table: "* ring at 8000 tokens: sends inside a domain of up to ..." per extrapolated row.
std::string calibration_line(const topologies::Topology& topology);
// "; band: compute +-12.5 %, communication +-36.0 % (the profile's validation)", from the first row.
std::string band_line(const std::vector<DecodeRow>& rows);
// "compute +-12.5 %, communication +-36.0 %".
std::string errors_text(const model::RelativeErrors& errors);
// The errors behind several bands, for a legend: the smallest as errors_text gives them, and "; twice that where
// extrapolated" when some differ (a calibrated cluster doubles its errors outside what it measured).
std::string errors_legend(const std::vector<model::RelativeErrors>& errors);
// "88.9 us - 192 us" (or "... - unbounded").
std::string format_band(const model::Band& band);
std::string calibration_marker(const DecodeRow& row);
// The notes under a table: "* ..." per extrapolated row, then "! ring at 128000 tokens, batch 1 does not fit: it
// needs 143.9 GB per GPU (...), a GPU has 80 GB" per row that does not fit (marked "!" in its `fits` column).
void print_extrapolation_notes(std::ostream& out, const std::vector<const DecodeRow*>& rows);
bool any_does_not_fit(const std::vector<const DecodeRow*>& rows);
// The "!" notes alone.
void print_memory_notes(std::ostream& out, const std::vector<const DecodeRow*>& rows);

// CSV: a header, then one line per row; the optional columns appear when `first` (the first row) has them.
std::string decode_csv_header(const DecodeRow& first);
std::string decode_csv_line(const DecodeRow& row, const DecodeRow& first);
void print_decode_csv(std::ostream& out, const std::vector<DecodeRow>& rows);

}  // namespace treering::analysis
