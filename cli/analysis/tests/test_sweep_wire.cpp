// A sweep row as bytes (cli/analysis/include/treering/analysis/sweep_wire.hpp): every field back, doubles bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "full_row.hpp"
#include "treering/analysis/sweep_wire.hpp"

using treering::analysis::decode_row;
using treering::analysis::DecodeRow;
using treering::analysis::encode_row;
using treering::analysis::testing::full_row;
using treering::analysis::testing::kInfinity;
namespace model = treering::model;

namespace {

std::uint64_t bits(double value) {
  std::uint64_t pattern = 0;
  std::memcpy(&pattern, &value, sizeof value);
  return pattern;
}

}  // namespace

TEST_CASE("a sweep row as bytes: every field comes back, doubles bit for bit") {
  const DecodeRow sent = full_row();
  const DecodeRow got = decode_row(encode_row(sent));
  const model::DecodeResult& r = got.result;
  CHECK(r.algorithm == model::DecodeAlgorithm::tree_lse);
  CHECK(r.seq_len == 5'120'000'000LL);
  CHECK(r.gpus == 128);
  CHECK(r.domains == 16);
  CHECK(r.impl == "naive");
  CHECK(bits(r.latency_s) == bits(0.30000000000000004));
  CHECK(r.latency_s != 0.3);
  CHECK(r.breakdown.compute_s == 1.5e-5);
  CHECK(r.breakdown.intra_node_s == 2.5e-6);
  CHECK(bits(r.breakdown.inter_node_s) == 1);  // the smallest subnormal: the lowest bit alone
  CHECK(r.breakdown.inter_node_latency_bound_s == 3.25e-7);
  CHECK(bits(r.breakdown.overlapped_communication_s) == std::uint64_t{1} << 63);  // -0: the sign bit alone
  CHECK(r.breakdown.host_s == 7e-7);
  CHECK(bits(r.volume.per_gpu) == bits(1.0 / 3));
  CHECK(r.volume.intra_node == 2e9);
  CHECK(r.volume.inter_node == 3e10);
  CHECK(r.volume.total == 4e11);
  CHECK(r.memory.kv_cache == 1e9);
  CHECK(r.memory.receive_buffers == 2e6);
  CHECK(r.memory.partial_states == 3e5);
  CHECK(r.memory.workspace == 4e4);
  CHECK(r.memory.weights == 5e10);
  CHECK(r.memory.total == 6.000000000000001e10);
  CHECK(r.weights_s == 1e-3);
  CHECK(r.token_s == 2e-3);
  CHECK(r.first_call_s == 3e-3);
  REQUIRE(r.phases.size() == 2);
  CHECK(r.phases[0].label == "combine\nline");
  CHECK(r.phases[0].time_s == 4e-6);
  CHECK(r.phases[0].inter_node);
  CHECK(r.phases[0].how == std::string("nvls\0x", 6));
  CHECK(r.phases[1].label.empty());
  CHECK_FALSE(r.phases[1].inter_node);
  CHECK(got.engine == treering::validate::Engine::sim);
  CHECK(got.cluster == "dgx-h100");
  CHECK(got.cluster_nodes == 16);
  CHECK(got.nodes_used == 15);
  CHECK(got.workload == "paper-mha16");
  CHECK(got.batch == 8);
  CHECK(got.prefill_s == 0.8);
  REQUIRE(got.generation_s.has_value());
  CHECK(std::isnan(*got.generation_s));
  CHECK(got.model_latency_s == -kInfinity);
  CHECK(got.transfers_simulated == 9'000'000'000LL);
  CHECK(got.links == sent.links);
  CHECK(got.links.dump() == R"({"z":{"bytes":3.0000000000000004,"utilisation":0.5},"a":[1,-2,null]})");  // order kept
  CHECK(got.calibration == treering::analysis::CalibrationState::extrapolated);
  CHECK(got.extrapolation == "sends beyond 64 MiB");
  CHECK(got.errors.compute == 0.125);
  CHECK(got.errors.communication == 0.36);
  CHECK(got.errors.network_latency == 0.54);
  CHECK(got.errors.source == "the profile's validation");
  CHECK(got.latency_band.low_s == 8.9e-5);
  CHECK(got.latency_band.high_s == kInfinity);
  REQUIRE(got.generation_band.has_value());
  CHECK(got.generation_band->low_s == 1.0);
  CHECK(got.generation_band->high_s == 2.0);
  CHECK(got.layout.tp == 4);
  CHECK(got.layout.cp == 32);
  CHECK(got.placement == model::LayoutOrder::cp_inner);
  REQUIRE(got.step.has_value());
  CHECK(got.step->scope == model::Scope::layer);
  CHECK(got.step->layer_s == 1.1e-4);
  CHECK(got.step->step_s == 1.4e-2);
  CHECK(got.step->tokens_per_s == 571.4);
  CHECK(got.step->post_attention_gpus == 8);
  CHECK(got.step->tokens_per_gpu == 2);
  CHECK(got.step->breakdown.attention_s == 1e-5);
  CHECK(got.step->breakdown.projections_s == 2e-5);
  CHECK(got.step->breakdown.mlp_s == 3e-5);
  CHECK(got.step->breakdown.tp_communication_s == 4e-5);
  CHECK(got.step->breakdown.tp_network_latency_s == 4.5e-5);
  CHECK(got.step->breakdown.other_s == 5e-5);
  CHECK(got.step->breakdown.lm_head_s == 6e-5);
  CHECK(got.step->memory.weights == 1e10);
  CHECK(got.step->memory.kv_cache == 2e10);
  CHECK(got.step->memory.buffers == 3e8);
  CHECK(got.step->memory.activations == 4e7);
  CHECK(got.step->memory.total == 3.34e10);
  CHECK(got.step->memory.capacity == 8e10);
  CHECK(got.step->memory.max_seq_len == 1'000'000);
}

TEST_CASE("a sweep row as bytes: absent optionals stay absent") {
  const DecodeRow got = decode_row(encode_row(DecodeRow{}));
  CHECK_FALSE(got.prefill_s.has_value());
  CHECK_FALSE(got.generation_s.has_value());
  CHECK_FALSE(got.model_latency_s.has_value());
  CHECK_FALSE(got.transfers_simulated.has_value());
  CHECK_FALSE(got.generation_band.has_value());
  CHECK_FALSE(got.step.has_value());
  CHECK(got.links.is_null());
  CHECK(got.result.phases.empty());
  CHECK(got.engine == treering::validate::Engine::model);  // the defaults, as sent
}

TEST_CASE("a sweep row as bytes: what encode_row did not write is an error") {
  const std::string bytes = encode_row(full_row());
  const std::string refused = "a sweep row that is not one encode_row wrote: ";
  auto message = [](const std::string& input) {
    try {
      decode_row(input);
    } catch (const std::runtime_error& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  CHECK(message("").starts_with(refused));                                 // nothing
  CHECK(message(bytes.substr(0, bytes.size() - 1)).starts_with(refused));  // truncated
  CHECK(message(bytes.substr(0, bytes.size() / 2)).starts_with(refused));
  CHECK(message(bytes + "x").starts_with(refused));  // left over
  CHECK(message(bytes + "x").find("expected end of input") != std::string::npos);
  // CBOR, but not a row: a map without the row's keys (0xa0: an empty map), a number (0x01).
  CHECK(message(std::string("\xa0", 1)).find("key 'result' not found") != std::string::npos);
  CHECK(message(std::string("\x01", 1)).starts_with(refused));
}
