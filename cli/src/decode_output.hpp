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
  int nodes_used = 0;
  std::optional<double> prefill_s;
  std::optional<double> generation_s;
  std::optional<double> model_latency_s;        // simulate: the model's figure beside the simulated one
  std::optional<long long> transfers_simulated;  // simulate
  nlohmann::ordered_json links;                  // simulate: bytes and utilisation per link (JSON only)
};

int nodes_used(const topologies::Topology& topology, const std::vector<int>& gpus);

nlohmann::ordered_json decode_json(const DecodeRow& row, const topologies::Topology& topology, const model::Workload& workload);

// A header line, then one line per row; the optional columns appear when the first row has them.
void print_decode_csv(std::ostream& out, const std::vector<DecodeRow>& rows, const topologies::Topology& topology,
                      const model::Workload& workload);

}  // namespace treering::cli
