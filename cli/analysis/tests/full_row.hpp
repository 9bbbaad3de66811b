// A decode row whose every field holds a value unlike its default, each different from the others, for the
// tests of the row's wire format (sweep_wire) and its columns (decode_columns).
#pragma once

#include <limits>
#include <string>

#include "treering/analysis/decode_output.hpp"

namespace treering::analysis::testing {

// Doubles that text in too few digits, or JSON, would not bring back: 0.1 + 0.2 (0.30000000000000004), the
// smallest subnormal, -0, +infinity, a NaN, 1/3.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
inline const double kSum = 0.1 + 0.2;
inline const double kTiny = std::numeric_limits<double>::denorm_min();

// Every field a value unlike its default, each different from the others.
inline DecodeRow full_row() {
  DecodeRow row;
  model::DecodeResult& r = row.result;
  r.algorithm = model::DecodeAlgorithm::tree_lse;
  r.seq_len = 5'120'000'000LL;  // over 2^32
  r.gpus = 128;
  r.domains = 16;
  r.impl = "naive";
  r.latency_s = kSum;
  r.breakdown = {1.5e-5, 2.5e-6, kTiny, 3.25e-7, -0.0, 7e-7};
  r.volume = {1.0 / 3, 2e9, 3e10, 4e11};
  r.memory = {1e9, 2e6, 3e5, 4e4, 5e10, 6.000000000000001e10};
  r.weights_s = 1e-3;
  r.token_s = 2e-3;
  r.first_call_s = 3e-3;
  r.phases = {{"combine\nline", 4e-6, true, std::string("nvls\0x", 6)}, {"", 0, false, ""}};
  row.engine = validate::Engine::sim;
  row.cluster = "dgx-h100";
  row.cluster_nodes = 16;
  row.nodes_used = 15;
  row.workload = "paper-mha16";
  row.batch = 8;
  row.prefill_s = 0.8;
  row.generation_s = std::numeric_limits<double>::quiet_NaN();
  row.model_latency_s = -kInfinity;
  row.transfers_simulated = 9'000'000'000LL;
  row.links =
      nlohmann::ordered_json::parse(R"({"z": {"bytes": 3.0000000000000004, "utilisation": 0.5}, "a": [1, -2, null]})");
  row.calibration = CalibrationState::extrapolated;
  row.extrapolation = "sends beyond 64 MiB";
  row.errors = {0.125, 0.36, 0.54, "the profile's validation"};
  row.latency_band = {8.9e-5, kInfinity};
  row.generation_band = model::Band{1.0, 2.0};
  row.layout = {4, 32};
  row.placement = model::LayoutOrder::cp_inner;
  model::StepResult step;
  step.scope = model::Scope::layer;
  step.layer_s = 1.1e-4;
  step.step_s = 1.4e-2;
  step.tokens_per_s = 571.4;
  step.post_attention_gpus = 8;
  step.tokens_per_gpu = 2;
  step.breakdown = {1e-5, 2e-5, 3e-5, 4e-5, 4.5e-5, 5e-5, 6e-5};
  step.memory = {1e10, 2e10, 3e8, 4e7, 3.34e10, 8e10, 1'000'000};
  row.step = step;
  return row;
}

}  // namespace treering::analysis::testing
