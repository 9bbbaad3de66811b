// Implementation profiles: the presets load and cite every number; bad profiles (prefill and engine_step included)
// are FILE:LINE:COL errors.
#include <doctest/doctest.h>

#include <string>

#include "treering/topologies/impl_profile.hpp"

using namespace treering::topologies;

namespace {

std::string error_of(const std::string& text) {
  try {
    load_impl_profile_text(text, "p.yaml");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

const std::string kHead =
    "name: x\n"
    "description: d\n"
    "implementation: i\n"
    "uncertainty: {compute: 0.1, communication: 0.2, source: s}\n";

}  // namespace

TEST_CASE("every preset profile loads and cites each number it sets") {
  REQUIRE(impl_presets().size() >= 5);
  for (const char* name :
       {"efficient", "meta-cp-decode", "paper-jax-microbench", "paper-torch-llama", "treering-realrun-cpu"}) {
    CAPTURE(name);
    const ImplProfile profile = load_impl_profile(name);
    CHECK(profile.name == name);
    CHECK(!profile.uncertainty.source.empty());
    auto cited = [&](const char* key) { return profile.sources.count(key) == 1 && !profile.sources.at(key).empty(); };
    if (profile.kernel_launch_s) CHECK(cited("kernel_launch"));
    if (profile.eager_dispatch_s) CHECK(cited("eager_dispatch"));
    if (profile.collective_call_s > 0) CHECK(cited("collective_call"));
    if (profile.host_round_trip_s > 0) CHECK(cited("host_round_trip"));
    if (profile.first_call_s > 0) CHECK(cited("first_call"));
    if (profile.kv_expansion) CHECK(cited("kv_expansion"));
    if (profile.other_kernels_per_layer > 0) CHECK(cited("other_kernels_per_layer"));
    if (!profile.collective_algorithm.empty()) CHECK(cited("collective_algorithm"));
    if (profile.partial_o_bytes > 0) CHECK(cited("partial_o_bytes"));
    if (!profile.ring_overlap || profile.ring_exchanges_per_step != 1 || profile.ring_host_round_trips_per_step > 0) {
      CHECK(cited("ring"));
    }
    for (const ExtraWork& work : profile.per_layer) CHECK(!work.source.empty());
    if (profile.prefill) CHECK(cited("prefill"));
  }
  CHECK(default_impl_profile().name == "efficient");
}

TEST_CASE("a profile with every field reads back what it says") {
  const ImplProfile p = load_impl_profile_text(
      kHead +
          "kernel_launch: {value: 8us, source: a}\n"
          "collective_call: 10us\n"
          "host_round_trip: 20us\n"
          "first_call: 2.5s\n"
          "kv_expansion: true\n"
          "ring: {overlap: false, exchanges_per_step: 2, host_round_trips_per_step: 1}\n"
          "per_layer:\n"
          "  - {what: cat, kernels: 2, kv_bytes: 2, ranks: last, source: b}\n"
          "  - {what: barrier, collective: allreduce, bytes: 4B, host_round_trips: 1, source: c}\n",
      "p.yaml");
  CHECK(*p.kernel_launch_s == doctest::Approx(8e-6).scale(1e-12));
  CHECK(p.sources.at("kernel_launch") == "a");
  CHECK(p.collective_call_s == doctest::Approx(10e-6).scale(1e-12));
  CHECK(p.first_call_s == doctest::Approx(2.5).scale(1e-12));
  CHECK(p.kv_expansion);
  CHECK(!p.ring_overlap);
  CHECK(p.ring_exchanges_per_step == 2);
  REQUIRE(p.per_layer.size() == 2);
  CHECK(p.per_layer[0].ranks == ExtraRanks::last);
  CHECK(p.per_layer[0].kv_bytes == 2.0);
  CHECK(p.per_layer[1].collective == "allreduce");
  CHECK(p.per_layer[1].bytes == 4.0);
  CHECK(p.per_layer[1].location.line == 13);  // 4 head lines, then kernel_launch .. per_layer's second entry
}

TEST_CASE("bad profiles point at the mistake") {
  // Lines counted from kHead's 4 lines: the 5th line is the first after it.
  CHECK(error_of(kHead + "kernel_lunch: 4us\n") ==
        "p.yaml:5:1: error: unknown key 'kernel_lunch' in the implementation profile (did you mean 'kernel_launch'?)");
  CHECK(error_of(kHead + "kernel_launch: {value: 4us}\n").find("p.yaml:5:16: error:") ==
        0);  // the map lacks its source
  CHECK(error_of(kHead + "per_layer:\n  - {what: x, kernels: 1, ranks: first, source: s}\n")
            .find("p.yaml:6:34: error: 'ranks' must be") == 0);
  CHECK(error_of(kHead +
                 "per_layer:\n  - {what: b, collective: allreduce, bytes: 4B, host_round_trips: 1, source: s}\n") ==
        "p.yaml:1:1: error: the profile makes host round trips: give 'host_round_trip' (its cost)");
  CHECK(error_of(kHead + "cuda_graphs: true\nhost_round_trip: 5us\nring: {host_round_trips_per_step: 1}\n")
            .find("p.yaml:5:14: error: a decode step replayed") == 0);
  CHECK(error_of("name: x\ndescription: d\nimplementation: i\n").find("p.yaml:1:1: error:") == 0);  // no uncertainty
  CHECK(error_of(kHead + "first_call: 7200s\n").find("p.yaml:5:13: error: 'first_call' is implausibly large") == 0);
  // Eager dispatch: a duration with its source; a graph replay dispatches nothing from the host.
  CHECK(*load_impl_profile_text(kHead + "eager_dispatch: {value: 25us, source: blog}\n", "p.yaml").eager_dispatch_s ==
        doctest::Approx(25e-6).scale(1e-12));
  CHECK(error_of(kHead + "eager_dispatch: -3us\n").find("p.yaml:5:17: error:") == 0);
  CHECK(error_of(kHead + "cuda_graphs: true\neager_dispatch: 25us\n")
            .find("p.yaml:5:14: error: a decode step replayed from a CUDA graph dispatches nothing") == 0);
  // network_latency: optional, in [0, 10], communication's when absent.
  const std::string head =
      "name: x\ndescription: d\nimplementation: i\nuncertainty: {compute: 0.1, communication: 0.2, ";
  CHECK(error_of(head + "network_latency: -1, source: s}\n").find("p.yaml:4:") == 0);
  CHECK(error_of(head + "network_latency: -1, source: s}\n").find("error:") != std::string::npos);
  CHECK(error_of(head + "network_latency: fast, source: s}\n").find("p.yaml:4:") == 0);
  CHECK(error_of(head + "netwrok_latency: 0.5, source: s}\n").find("p.yaml:4:") == 0);  // unknown key
  CHECK(load_impl_profile_text(kHead, "p.yaml").uncertainty.network_latency == 0.2);
  CHECK(load_impl_profile_text(head + "network_latency: 0.6, source: s}\n", "p.yaml").uncertainty.network_latency ==
        0.6);
  CHECK_THROWS_AS(load_impl_profile("no-such-profile"), InputError);
}

TEST_CASE("a profile written as YAML reads back to the same values and sources") {
  for (const ImplProfile& preset : impl_presets()) {
    CAPTURE(preset.name);
    const std::string text = impl_profile_yaml(preset);
    const ImplProfile back = load_impl_profile_text(text, "written.yaml");
    CHECK(back.name == preset.name);
    CHECK(back.description == preset.description);
    CHECK(back.implementation == preset.implementation);
    CHECK(back.kernel_launch_s.has_value() == preset.kernel_launch_s.has_value());
    if (preset.kernel_launch_s)
      CHECK(*back.kernel_launch_s == doctest::Approx(*preset.kernel_launch_s).scale(1e-12).epsilon(1e-9));
    CHECK(back.eager_dispatch_s.has_value() == preset.eager_dispatch_s.has_value());
    if (preset.eager_dispatch_s)
      CHECK(*back.eager_dispatch_s == doctest::Approx(*preset.eager_dispatch_s).scale(1e-12).epsilon(1e-9));
    CHECK(back.collective_call_s == doctest::Approx(preset.collective_call_s).scale(1e-12).epsilon(1e-9));
    CHECK(back.host_round_trip_s == doctest::Approx(preset.host_round_trip_s).scale(1e-12).epsilon(1e-9));
    CHECK(back.first_call_s == doctest::Approx(preset.first_call_s).scale(1e-12).epsilon(1e-9));
    CHECK(back.kv_expansion == preset.kv_expansion);
    CHECK(back.cuda_graphs == preset.cuda_graphs);
    CHECK(back.ring_overlap == preset.ring_overlap);
    CHECK(back.ring_exchanges_per_step == preset.ring_exchanges_per_step);
    CHECK(back.ring_host_round_trips_per_step == preset.ring_host_round_trips_per_step);
    CHECK(back.other_kernels_per_layer == preset.other_kernels_per_layer);
    CHECK(back.collective_algorithm == preset.collective_algorithm);
    CHECK(back.partial_o_bytes == preset.partial_o_bytes);
    CHECK(back.prefill.has_value() == preset.prefill.has_value());
    if (preset.prefill) {
      CHECK(back.prefill->attention_schedule == preset.prefill->attention_schedule);
      CHECK(back.prefill->attention_efficiency == preset.prefill->attention_efficiency);
    }
    CHECK(back.engine_step.has_value() == preset.engine_step.has_value());
    if (preset.engine_step) {
      CHECK(back.engine_step->fixed_s == doctest::Approx(preset.engine_step->fixed_s).scale(1e-12).epsilon(1e-9));
      CHECK(back.engine_step->per_sequence_s ==
            doctest::Approx(preset.engine_step->per_sequence_s).scale(1e-12).epsilon(1e-9));
    }
    CHECK(back.uncertainty.compute == preset.uncertainty.compute);
    CHECK(back.uncertainty.communication == preset.uncertainty.communication);
    CHECK(back.uncertainty.network_latency == preset.uncertainty.network_latency);
    CHECK(back.sources == preset.sources);
    REQUIRE(back.per_layer.size() == preset.per_layer.size());
    for (size_t i = 0; i < preset.per_layer.size(); ++i) {
      const ExtraWork& a = preset.per_layer[i];
      const ExtraWork& b = back.per_layer[i];
      CHECK(b.what == a.what);
      CHECK(b.source == a.source);
      CHECK(b.algorithms == a.algorithms);
      CHECK(b.ranks == a.ranks);
      CHECK(b.kernels == a.kernels);
      CHECK(b.kv_bytes == a.kv_bytes);
      CHECK(b.expanded_kv_bytes == a.expanded_kv_bytes);
      CHECK(b.collective == a.collective);
      CHECK(b.collective_bytes == a.collective_bytes);
      CHECK(b.bytes == a.bytes);
      CHECK(b.host_round_trips == a.host_round_trips);
    }
  }
}

TEST_CASE("a prefill section reads back its schedule, efficiency and source") {
  const ImplProfile p = load_impl_profile_text(
      kHead + "prefill: {attention_schedule: ring-causal-skip, attention_efficiency: 0.37, source: fa3-fig5}\n",
      "p.yaml");
  REQUIRE(p.prefill.has_value());
  CHECK(p.prefill->attention_schedule == "ring-causal-skip");
  CHECK(p.prefill->attention_efficiency == 0.37);
  CHECK(p.sources.at("prefill") == "fa3-fig5");
  CHECK(!load_impl_profile_text(kHead, "p.yaml").prefill.has_value());  // absent: the generic estimate
}

TEST_CASE("a bad prefill section is an error at its key") {
  // Line 5 is the prefill line; columns count from 1.
  CHECK(error_of(kHead + "prefill: {attention_schedule: balanced, attention_efficiency: 0.4, source: s}\n")
            .find("p.yaml:5:31: error: 'attention_schedule' must be ring-causal-skip, got 'balanced'") == 0);
  CHECK(error_of(kHead + "prefill: {attention_schedule: ring-causal-skip, attention_efficiency: 1.5, source: s}\n")
            .find("p.yaml:5:") == 0);
  CHECK(error_of(kHead + "prefill: {attention_schedule: ring-causal-skip, attention_efficiency: 0.4}\n")
            .find("p.yaml:5:10: error:") == 0);
  CHECK(error_of(kHead + "prefill: {attention_schedul: ring-causal-skip, attention_efficiency: 0.4, source: s}\n")
            .find("unknown key 'attention_schedul' in the prefill section") != std::string::npos);
}

TEST_CASE("an engine_step section reads back its fixed and per-sequence work and its source") {
  const ImplProfile p =
      load_impl_profile_text(kHead + "engine_step: {fixed: 0.8ms, per_sequence: 12us, source: profiled}\n", "p.yaml");
  REQUIRE(p.engine_step.has_value());
  CHECK(p.engine_step->fixed_s == doctest::Approx(0.8e-3).scale(1e-12));
  CHECK(p.engine_step->per_sequence_s == doctest::Approx(12e-6).scale(1e-12));
  CHECK(p.sources.at("engine_step") == "profiled");
  // 0.8 ms + 32 x 12 us = 1.184 ms a step at batch 32.
  CHECK(p.engine_step->step_s(32) == doctest::Approx(1.184e-3).scale(1e-12));
  const ImplProfile back = load_impl_profile_text(impl_profile_yaml(p), "back.yaml");
  REQUIRE(back.engine_step.has_value());
  CHECK(back.engine_step->fixed_s == doctest::Approx(0.8e-3).scale(1e-12));
  CHECK(back.engine_step->per_sequence_s == doctest::Approx(12e-6).scale(1e-12));
  CHECK(back.engine_step->source == "profiled");
  CHECK_FALSE(load_impl_profile_text(kHead, "p.yaml").engine_step.has_value());  // absent: no engine
}

TEST_CASE("an engine_step's GEMM FLOP efficiency adds the step's GEMM FLOPs at that share of the peak") {
  const ImplProfile p = load_impl_profile_text(
      kHead + "engine_step: {fixed: 1ms, per_sequence: 10us, gemm_flop_efficiency: 0.05, source: s}\n", "p.yaml");
  REQUIRE(p.engine_step.has_value());
  CHECK(p.engine_step->gemm_flop_efficiency == doctest::Approx(0.05).scale(1e-12));
  // llama3.1-8b's GEMMs (7.5e9 parameters) at batch 32 on a 1,307.4 TFLOP/s GPU: 2 x 32 x 7.5e9 / 1.3074e15 =
  // 0.367 ms at peak, / 0.05 = 7.343 ms; plus 1 ms + 32 x 10 us = 1.32 ms: 8.663 ms.
  const double at_peak_s = 2.0 * 32 * 7.5e9 / 1.3074e15;
  CHECK(p.engine_step->step_s(32, at_peak_s) == doctest::Approx(1.32e-3 + at_peak_s / 0.05).scale(1e-12));
  CHECK(p.engine_step->step_s(32, at_peak_s) == doctest::Approx(8.663e-3).scale(1e-12).epsilon(1e-3));
  const ImplProfile back = load_impl_profile_text(impl_profile_yaml(p), "back.yaml");
  CHECK(back.engine_step->gemm_flop_efficiency == doctest::Approx(0.05).scale(1e-12));
  // none: the GEMMs' FLOPs add nothing
  const ImplProfile plain = load_impl_profile_text(kHead + "engine_step: {fixed: 1ms, source: s}\n", "p.yaml");
  CHECK(plain.engine_step->step_s(32, at_peak_s) == doctest::Approx(1e-3).scale(1e-12));
  CHECK(impl_profile_yaml(plain).find("gemm_flop_efficiency") == std::string::npos);
  CHECK(error_of(kHead + "engine_step: {fixed: 1ms, gemm_flop_efficiency: 1.5, source: s}\n").find("p.yaml:5:") == 0);
  CHECK(error_of(kHead + "engine_step: {fixed: 1ms, gemm_flop_efficiency: 0, source: s}\n").find("p.yaml:5:") == 0);
}

TEST_CASE("an engine_step's paged_attention: both kernels' efficiencies, read back, checked at their keys") {
  const ImplProfile p = load_impl_profile_text(
      kHead +
          "engine_step: {fixed: 1ms, paged_attention: {v1_bandwidth_efficiency: 0.5, v2_bandwidth_efficiency: 1.5},"
          " source: s}\n",
      "p.yaml");
  REQUIRE(p.engine_step->paged_attention.has_value());
  CHECK(p.engine_step->paged_attention->v1_bandwidth_efficiency == 0.5);
  CHECK(p.engine_step->paged_attention->v2_bandwidth_efficiency == 1.5);
  const ImplProfile back = load_impl_profile_text(impl_profile_yaml(p), "back.yaml");
  REQUIRE(back.engine_step->paged_attention.has_value());
  CHECK(back.engine_step->paged_attention->v2_bandwidth_efficiency == 1.5);
  CHECK(p.engine_step->paged_attention->v1_shared_memory_per_multiprocessor_bytes == 0);  // occupancy not modelled
  CHECK(p.engine_step->paged_attention->max_seq_len_to_capture == 8192);                  // vLLM's default
  const ImplProfile occupancy = load_impl_profile_text(
      kHead +
          "engine_step: {fixed: 1ms, source: s, paged_attention: {v1_bandwidth_efficiency: 0.3, "
          "v2_bandwidth_efficiency: 1, v1_shared_memory_per_multiprocessor: 64KiB, max_seq_len_to_capture: 4096}}\n",
      "p.yaml");
  const ImplProfile occupancy_back = load_impl_profile_text(impl_profile_yaml(occupancy), "back.yaml");
  CHECK(occupancy_back.engine_step->paged_attention->v1_shared_memory_per_multiprocessor_bytes == 65536);
  CHECK(occupancy_back.engine_step->paged_attention->max_seq_len_to_capture == 4096);
  const ImplProfile plain = load_impl_profile_text(kHead + "engine_step: {fixed: 1ms, source: s}\n", "p.yaml");
  CHECK_FALSE(plain.engine_step->paged_attention.has_value());
  CHECK(impl_profile_yaml(plain).find("paged_attention") == std::string::npos);
  // out of [0.01, 4], one missing, an unknown key: errors on line 5 (the engine_step line)
  const std::string start = kHead + "engine_step: {fixed: 1ms, source: s, paged_attention: ";
  CHECK(error_of(start + "{v1_bandwidth_efficiency: 5, v2_bandwidth_efficiency: 1}}\n").find("p.yaml:5:") == 0);
  CHECK(error_of(start + "{v1_bandwidth_efficiency: 0, v2_bandwidth_efficiency: 1}}\n").find("p.yaml:5:") == 0);
  CHECK(error_of(start + "{v1_bandwidth_efficiency: 0.5}}\n").find("p.yaml:5:") == 0);
  const std::string both = start + "{v1_bandwidth_efficiency: 0.5, v2_bandwidth_efficiency: 1, ";
  CHECK(error_of(both + "v1_shared_memory_per_multiprocessor: 65536}}\n").find("has no unit") != std::string::npos);
  CHECK(error_of(both + "max_seq_len_to_capture: 8}}\n").find("p.yaml:5:") == 0);  // under 16 tokens
  CHECK(error_of(start + "{v1_bandwidth_efficiency: 0.5, v2_bandwidth_efficiency: 1, v3: 1}}\n").find("p.yaml:5:") ==
        0);
}

TEST_CASE("an engine_step's per_collective: read, written back only when set, never negative") {
  const ImplProfile p =
      load_impl_profile_text(kHead + "engine_step: {fixed: 1ms, per_collective: 60us, source: s}\n", "p.yaml");
  CHECK(p.engine_step->per_collective_s == doctest::Approx(60e-6).scale(1e-12));
  // 1 ms + 65 collectives x 60 us = 4.9 ms at batch 1 (no per-sequence work, no GEMM term)
  CHECK(p.engine_step->step_s(1, 0.0, 65) == doctest::Approx(4.9e-3).scale(1e-12));
  CHECK(load_impl_profile_text(impl_profile_yaml(p), "back.yaml").engine_step->per_collective_s ==
        doctest::Approx(60e-6).scale(1e-12));
  const ImplProfile plain = load_impl_profile_text(kHead + "engine_step: {fixed: 1ms, source: s}\n", "p.yaml");
  CHECK(impl_profile_yaml(plain).find("per_collective") == std::string::npos);
  CHECK(error_of(kHead + "engine_step: {fixed: 1ms, per_collective: -5us, source: s}\n").find("p.yaml:5:") == 0);
}

TEST_CASE("an engine_step's per_layer: read, written back only when set, never negative, without unit an error") {
  const ImplProfile p = load_impl_profile_text(
      kHead + "engine_step: {fixed: 1ms, per_collective: 60us, per_layer: 130us, source: s}\n", "p.yaml");
  CHECK(p.engine_step->per_layer_s == doctest::Approx(130e-6).scale(1e-12));
  // 1 ms + 65 collectives x 60 us + 32 layers x 130 us = 1 + 3.9 + 4.16 = 9.06 ms at batch 1
  CHECK(p.engine_step->step_s(1, 0.0, 65, 32) == doctest::Approx(9.06e-3).scale(1e-12));
  CHECK(load_impl_profile_text(impl_profile_yaml(p), "back.yaml").engine_step->per_layer_s ==
        doctest::Approx(130e-6).scale(1e-12));
  const ImplProfile plain = load_impl_profile_text(kHead + "engine_step: {fixed: 1ms, source: s}\n", "p.yaml");
  CHECK(impl_profile_yaml(plain).find(" per_layer:") == std::string::npos);  // (other_kernels_per_layer is not it)
  CHECK(error_of(kHead + "engine_step: {fixed: 1ms, per_layer: -5us, source: s}\n").find("p.yaml:5:") == 0);
  CHECK(error_of(kHead + "engine_step: {fixed: 1ms, per_layer: 130, source: s}\n").find("p.yaml:5:") == 0);
}

TEST_CASE("a bad engine_step section is an error at its key") {
  CHECK(error_of(kHead + "engine_step: {fixed: 0.8ms, per_sequence: 12us}\n").find("p.yaml:5:") == 0);  // no source
  CHECK(error_of(kHead + "engine_step: {fixed: -1ms, source: s}\n").find("p.yaml:5:") == 0);
  CHECK(
      error_of(kHead + "engine_step: {fixd: 1ms, source: s}\n").find("unknown key 'fixd' in the engine_step section") !=
      std::string::npos);
}
