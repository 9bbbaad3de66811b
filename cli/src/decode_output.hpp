// The rows predict and simulate print: one schema for both engines (JSON objects, CSV columns), so that a
// program reading one reads the other.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "treering/model/decode.hpp"

namespace treering::cli {

struct DecodeRow {
  model::DecodeResult result;  // the model's, or the simulator's in the same form
  std::string engine = "model";
  std::string cluster;         // its name
  int cluster_nodes = 0;       // nodes in the cluster
  int nodes_used = 0;          // nodes the GPUs used sit on
  std::string workload;        // its name
  int batch = 1;
  std::optional<double> prefill_s;
  std::optional<double> generation_s;
  std::optional<double> model_latency_s;        // simulate: the model's figure beside the simulated one
  std::optional<long long> transfers_simulated;  // simulate
  nlohmann::ordered_json links;                  // simulate: bytes and utilisation per link (JSON only)
  // "none" (nominal figures), "inside" (the plan stays inside what the calibration measured) or "extrapolated",
  // with the reasons (model/extrapolation.hpp).
  std::string calibration = "none";
  std::string extrapolation;
};

// Fills the row's cluster, node, workload and calibration fields for `decode`'s GPUs running `plan`.
void set_context(DecodeRow& row, const model::DecodeModel& decode, const model::DecodePlan& plan);

nlohmann::ordered_json decode_json(const DecodeRow& row);

// For tables. The line under the title: "calibration: none (nominal bandwidths x default efficiencies)" or
// "calibration: bench.json, ... (2026-11-23)". A row's marker: "inside", "OUTSIDE *" or "" (uncalibrated). The
// notes under the table: "* ring at 8000 tokens: sends inside a domain of up to ..." per extrapolated row.
std::string calibration_line(const topologies::Topology& topology);
std::string calibration_marker(const DecodeRow& row);
void print_extrapolation_notes(std::ostream& out, const std::vector<const DecodeRow*>& rows);

// CSV: a header, then one line per row; the optional columns appear when `first` (the first row) has them.
std::string decode_csv_header(const DecodeRow& first);
std::string decode_csv_line(const DecodeRow& row, const DecodeRow& first);
void print_decode_csv(std::ostream& out, const std::vector<DecodeRow>& rows);

}  // namespace treering::cli
