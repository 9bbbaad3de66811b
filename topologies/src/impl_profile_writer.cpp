// Writing an implementation profile as YAML that load_impl_profile_text reads back to the same profile
// (impl_profile.hpp): every value, with its source where it has one.
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdio>

#include "treering/topologies/impl_profile.hpp"

namespace treering::topologies {
namespace {

// Seconds as the loader's units read them, to 9 significant digits: 3.8e-06 -> "3.8us", 1.02 -> "1.02s".
std::string duration_text(double seconds) {
  char text[48];
  if (seconds >= 1e-3)
    std::snprintf(text, sizeof text, "%.9gs", seconds);
  else
    std::snprintf(text, sizeof text, "%.9gus", seconds * 1e6);
  return text;
}

// The shortest text that reads back to the same double: 0.23 -> "0.23" (the emitter's default wrote
// 0.23000000000000001).
std::string shortest(double value) {
  char text[64];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

// `key: value`, or `key: {value: ..., source: "..."}` when the profile cites a source for it.
template <typename Value>
void sourced(YAML::Emitter& out, const ImplProfile& profile, const std::string& key, const Value& value) {
  out << YAML::Key << key << YAML::Value;
  const auto source = profile.sources.find(key);
  if (source == profile.sources.end()) {
    out << value;
    return;
  }
  out << YAML::BeginMap << YAML::Key << "value" << YAML::Value << value << YAML::Key << "source" << YAML::Value
      << YAML::DoubleQuoted << source->second << YAML::EndMap;
}

void write_extra(YAML::Emitter& out, const ExtraWork& work) {
  out << YAML::BeginMap << YAML::Key << "what" << YAML::Value << YAML::DoubleQuoted << work.what;
  if (!work.algorithms.empty()) out << YAML::Key << "algorithms" << YAML::Value << YAML::Flow << work.algorithms;
  if (work.ranks != ExtraRanks::all) out << YAML::Key << "ranks" << YAML::Value << to_string(work.ranks);
  if (!work.collective.empty()) {
    out << YAML::Key << "collective" << YAML::Value << work.collective << YAML::Key << "bytes" << YAML::Value
        << (work.collective_bytes.empty() ? std::to_string(work.bytes) + "B" : work.collective_bytes);
  } else {
    out << YAML::Key << "kernels" << YAML::Value << work.kernels;
    if (work.kv_bytes != 0) out << YAML::Key << "kv_bytes" << YAML::Value << work.kv_bytes;
    if (work.expanded_kv_bytes != 0) out << YAML::Key << "expanded_kv_bytes" << YAML::Value << work.expanded_kv_bytes;
    if (work.bytes != 0) out << YAML::Key << "bytes" << YAML::Value << std::to_string(work.bytes) + "B";
  }
  if (work.host_round_trips != 0) out << YAML::Key << "host_round_trips" << YAML::Value << work.host_round_trips;
  out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << work.source << YAML::EndMap;
}

void write_ring_prefill_uncertainty(YAML::Emitter& out, const ImplProfile& profile) {
  out << YAML::Key << "ring" << YAML::Value << YAML::BeginMap << YAML::Key << "overlap" << YAML::Value
      << profile.ring_overlap << YAML::Key << "exchanges_per_step" << YAML::Value << profile.ring_exchanges_per_step
      << YAML::Key << "host_round_trips_per_step" << YAML::Value << profile.ring_host_round_trips_per_step;
  if (const auto source = profile.sources.find("ring"); source != profile.sources.end()) {
    out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << source->second;
  }
  out << YAML::EndMap;
  if (profile.prefill) {
    out << YAML::Key << "prefill" << YAML::Value << YAML::BeginMap << YAML::Key << "attention_schedule" << YAML::Value
        << profile.prefill->attention_schedule << YAML::Key << "attention_efficiency" << YAML::Value
        << shortest(profile.prefill->attention_efficiency) << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted
        << profile.prefill->source << YAML::EndMap;
  }
  if (profile.engine_step) {
    out << YAML::Key << "engine_step" << YAML::Value << YAML::BeginMap << YAML::Key << "fixed" << YAML::Value
        << duration_text(profile.engine_step->fixed_s) << YAML::Key << "per_sequence" << YAML::Value
        << duration_text(profile.engine_step->per_sequence_s);
    if (profile.engine_step->gemm_flop_efficiency > 0) {
      out << YAML::Key << "gemm_flop_efficiency" << YAML::Value << shortest(profile.engine_step->gemm_flop_efficiency);
    }
    if (profile.engine_step->per_collective_s > 0) {
      out << YAML::Key << "per_collective" << YAML::Value << duration_text(profile.engine_step->per_collective_s);
    }
    if (profile.engine_step->per_layer_s > 0) {
      out << YAML::Key << "per_layer" << YAML::Value << duration_text(profile.engine_step->per_layer_s);
    }
    if (const auto& paged = profile.engine_step->paged_attention) {
      out << YAML::Key << "paged_attention" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
          << "v1_bandwidth_efficiency" << YAML::Value << shortest(paged->v1_bandwidth_efficiency) << YAML::Key
          << "v2_bandwidth_efficiency" << YAML::Value << shortest(paged->v2_bandwidth_efficiency);
      if (paged->v1_shared_memory_per_multiprocessor_bytes > 0) {
        out << YAML::Key << "v1_shared_memory_per_multiprocessor" << YAML::Value
            << shortest(paged->v1_shared_memory_per_multiprocessor_bytes) + "B";
      }
      if (paged->max_seq_len_to_capture != kDefaultMaxSeqLenToCapture) {
        out << YAML::Key << "max_seq_len_to_capture" << YAML::Value << paged->max_seq_len_to_capture;
      }
      out << YAML::EndMap;
    }
    out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << profile.engine_step->source << YAML::EndMap;
  }
  out << YAML::Key << "uncertainty" << YAML::Value << YAML::BeginMap << YAML::Key << "compute" << YAML::Value
      << shortest(profile.uncertainty.compute) << YAML::Key << "communication" << YAML::Value
      << shortest(profile.uncertainty.communication) << YAML::Key << "network_latency" << YAML::Value
      << shortest(profile.uncertainty.network_latency) << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted
      << profile.uncertainty.source << YAML::EndMap;
}

}  // namespace

std::string impl_profile_yaml(const ImplProfile& profile) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << profile.name;
  out << YAML::Key << "description" << YAML::Value << YAML::DoubleQuoted << profile.description;
  out << YAML::Key << "implementation" << YAML::Value << YAML::DoubleQuoted << profile.implementation;
  if (profile.kernel_launch_s) sourced(out, profile, "kernel_launch", duration_text(*profile.kernel_launch_s));
  if (profile.eager_dispatch_s) sourced(out, profile, "eager_dispatch", duration_text(*profile.eager_dispatch_s));
  sourced(out, profile, "collective_call", duration_text(profile.collective_call_s));
  sourced(out, profile, "host_round_trip", duration_text(profile.host_round_trip_s));
  sourced(out, profile, "first_call", duration_text(profile.first_call_s));
  sourced(out, profile, "kv_expansion", profile.kv_expansion);
  sourced(out, profile, "cuda_graphs", profile.cuda_graphs);
  sourced(out, profile, "other_kernels_per_layer", profile.other_kernels_per_layer);
  if (!profile.collective_algorithm.empty())
    sourced(out, profile, "collective_algorithm", profile.collective_algorithm);
  if (profile.partial_o_bytes != 0) sourced(out, profile, "partial_o_bytes", profile.partial_o_bytes);
  write_ring_prefill_uncertainty(out, profile);
  if (!profile.per_layer.empty()) {
    out << YAML::Key << "per_layer" << YAML::Value << YAML::BeginSeq;
    for (const ExtraWork& work : profile.per_layer) write_extra(out, work);
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace treering::topologies
