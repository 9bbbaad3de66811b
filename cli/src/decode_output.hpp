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
};

// Fills the row's cluster, node and workload fields for `decode`'s GPUs running `workload`.
void set_context(DecodeRow& row, const model::DecodeModel& decode, const model::Workload& workload);

nlohmann::ordered_json decode_json(const DecodeRow& row);

// CSV: a header, then one line per row; the optional columns appear when `first` (the first row) has them.
std::string decode_csv_header(const DecodeRow& first);
std::string decode_csv_line(const DecodeRow& row, const DecodeRow& first);
void print_decode_csv(std::ostream& out, const std::vector<DecodeRow>& rows);

}  // namespace treering::cli
