// Reading implementation profiles (impl_profile.hpp) strictly, with errors at the right place.
#include <fstream>
#include <sstream>

#include "treering/topologies/impl_profile.hpp"
#include "yaml_reader.hpp"

namespace treering::topologies {
namespace {

using yaml::StrictMap;

// A quantity written plainly (`kernel_launch: 4us`) or with its source (`kernel_launch: {value: 4us, source: ...}`):
// `read(map, key)` reads the value from whichever map holds it; the source goes to profile.sources[key].
template <typename Read>
auto sourced(const StrictMap& map, std::string_view key, ImplProfile& profile, Read read) {
  const YAML::Node node = map.required(key);
  if (!node.IsMap()) return read(map, key);
  StrictMap inner(node, map.file(), "'" + std::string(key) + "'", {"value", "source"});
  inner.required("value");
  profile.sources[std::string(key)] = inner.name("source");
  return read(inner, "value");
}

double duration(const StrictMap& map, std::string_view key) { return map.duration_s(key); }
bool flag(const StrictMap& map, std::string_view key) { return map.boolean_or(key, false); }

void read_ring(const StrictMap& root, ImplProfile& profile) {
  const YAML::Node node = root.optional("ring");
  if (!node) return;
  StrictMap ring(node, root.file(), "the ring section",
                 {"overlap", "exchanges_per_step", "host_round_trips_per_step", "source"});
  profile.ring_overlap = ring.boolean_or("overlap", true);
  profile.ring_exchanges_per_step = ring.integer_or("exchanges_per_step", 1, 16, 1);
  profile.ring_host_round_trips_per_step = ring.integer_or("host_round_trips_per_step", 0, 16, 0);
  if (ring.has("source")) profile.sources["ring"] = ring.name("source");
}

void read_prefill(const StrictMap& root, ImplProfile& profile) {
  const YAML::Node node = root.optional("prefill");
  if (!node) return;
  StrictMap map(node, root.file(), "the prefill section", {"attention_schedule", "attention_efficiency", "source"});
  PrefillProfile prefill;
  prefill.attention_schedule = map.string("attention_schedule");
  if (prefill.attention_schedule != "ring-causal-skip") {
    yaml::fail(map.file(), map.required("attention_schedule"),
               "'attention_schedule' must be ring-causal-skip, got '" + prefill.attention_schedule + "'");
  }
  prefill.attention_efficiency = map.number("attention_efficiency", 0.001, 1.0);
  prefill.source = map.name("source");
  profile.sources["prefill"] = prefill.source;
  profile.prefill = prefill;
}

// engine_step's paged_attention map (impl_profile.hpp, PagedAttention).
PagedAttention read_paged_attention(const StrictMap& map) {
  StrictMap paged(map.required("paged_attention"), map.file(), "engine_step's paged_attention",
                  {"v1_bandwidth_efficiency", "v2_bandwidth_efficiency", "v1_shared_memory_per_multiprocessor",
                   "max_seq_len_to_capture"});
  PagedAttention kernels;
  kernels.v1_bandwidth_efficiency = paged.number("v1_bandwidth_efficiency", kPagedEfficiencyMin, kPagedEfficiencyMax);
  kernels.v2_bandwidth_efficiency = paged.number("v2_bandwidth_efficiency", kPagedEfficiencyMin, kPagedEfficiencyMax);
  if (paged.has("v1_shared_memory_per_multiprocessor")) {
    kernels.v1_shared_memory_per_multiprocessor_bytes = paged.bytes("v1_shared_memory_per_multiprocessor");
  }
  kernels.max_seq_len_to_capture = paged.integer_or("max_seq_len_to_capture", 16, 1 << 24, kDefaultMaxSeqLenToCapture);
  return kernels;
}

void read_engine_step(const StrictMap& root, ImplProfile& profile) {
  const YAML::Node node = root.optional("engine_step");
  if (!node) return;
  StrictMap map(
      node, root.file(), "the engine_step section",
      {"fixed", "per_sequence", "gemm_flop_efficiency", "paged_attention", "per_collective", "per_layer", "source"});
  EngineStep engine;
  engine.fixed_s = map.duration_s("fixed");
  engine.per_sequence_s = map.has("per_sequence") ? map.duration_s("per_sequence") : 0.0;
  if (map.has("gemm_flop_efficiency")) engine.gemm_flop_efficiency = map.number("gemm_flop_efficiency", 1e-4, 1.0);
  if (map.has("paged_attention")) engine.paged_attention = read_paged_attention(map);
  engine.per_collective_s = map.has("per_collective") ? map.duration_s("per_collective") : 0.0;
  engine.per_layer_s = map.has("per_layer") ? map.duration_s("per_layer") : 0.0;
  engine.source = map.name("source");
  profile.sources["engine_step"] = engine.source;
  profile.engine_step = engine;
}

void read_uncertainty(const StrictMap& root, ImplProfile& profile) {
  StrictMap map(root.required("uncertainty"), root.file(), "the uncertainty section",
                {"compute", "communication", "network_latency", "source"});
  profile.uncertainty.compute = map.number("compute", 0.0, 10.0);
  profile.uncertainty.communication = map.number("communication", 0.0, 10.0);
  profile.uncertainty.network_latency = map.number_or("network_latency", 0.0, 10.0, profile.uncertainty.communication);
  profile.uncertainty.source = map.name("source");
  profile.sources["uncertainty"] = profile.uncertainty.source;
}

ExtraRanks parse_ranks(const StrictMap& map) {
  if (!map.has("ranks")) return ExtraRanks::all;
  const std::string text = map.string("ranks");
  if (text == "all") return ExtraRanks::all;
  if (text == "last") return ExtraRanks::last;
  if (text == "others") return ExtraRanks::others;
  yaml::fail(map.file(), map.required("ranks"), "'ranks' must be all, last or others, got '" + text + "'");
}

void read_collective(const StrictMap& map, ExtraWork& work) {
  work.collective = map.string("collective");
  if (work.collective != "allreduce" && work.collective != "broadcast") {
    yaml::fail(map.file(), map.required("collective"),
               "'collective' must be allreduce or broadcast, got '" + work.collective + "'");
  }
  const YAML::Node size = map.required("bytes");
  const std::string text = yaml::scalar_string(map.file(), size, "bytes");
  if (text == "q" || text == "o" || text == "stats") {
    work.collective_bytes = text;
  } else {
    work.bytes = map.bytes("bytes");
  }
  for (const char* key : {"kernels", "kv_bytes", "expanded_kv_bytes"}) {
    if (map.has(key))
      yaml::fail(map.file(), map.required(key), std::string("a collective entry takes no '") + key + "'");
  }
}

ExtraWork read_extra(const std::string& file, const YAML::Node& node) {
  StrictMap map(node, file, "an entry of per_layer",
                {"what", "source", "algorithms", "ranks", "kernels", "kv_bytes", "expanded_kv_bytes", "collective",
                 "bytes", "host_round_trips"});
  ExtraWork work;
  work.what = map.name("what");
  work.source = map.name("source");
  work.location = yaml::location_of(file, node);
  if (YAML::Node list = map.optional("algorithms")) {
    yaml::require_sequence(file, list, "algorithms");
    for (const YAML::Node& name : list) work.algorithms.push_back(yaml::scalar_string(file, name, "algorithms"));
  }
  work.ranks = parse_ranks(map);
  work.host_round_trips = map.integer_or("host_round_trips", 0, 16, 0);
  if (map.has("collective")) {
    read_collective(map, work);
    return work;
  }
  work.kernels = map.integer("kernels", 1, 1000);
  work.kv_bytes = map.number_or("kv_bytes", 0.0, 1000.0, 0.0);
  work.expanded_kv_bytes = map.number_or("expanded_kv_bytes", 0.0, 1000.0, 0.0);
  if (map.has("bytes")) work.bytes = map.bytes("bytes");
  return work;
}

void check_consistency(const StrictMap& map, const ImplProfile& profile) {
  int round_trips = profile.ring_host_round_trips_per_step;
  for (const ExtraWork& work : profile.per_layer) round_trips += work.host_round_trips;
  if (round_trips > 0 && !map.has("host_round_trip")) {
    yaml::fail(map.file(), map.node(), "the profile makes host round trips: give 'host_round_trip' (its cost)");
  }
  if (profile.cuda_graphs && profile.eager_dispatch_s) {
    yaml::fail(map.file(), map.required("cuda_graphs"),
               "a decode step replayed from a CUDA graph dispatches nothing from the host: drop 'eager_dispatch'");
  }
  if (profile.cuda_graphs && (round_trips > 0 || profile.collective_call_s > 0)) {
    yaml::fail(map.file(), map.required("cuda_graphs"),
               "a decode step replayed from a CUDA graph makes no host round trips and no per-call dispatch");
  }
}

ImplProfile read_profile(const std::string& file, const YAML::Node& root) {
  StrictMap map(
      root, file, "the implementation profile",
      {"name", "description", "implementation", "kernel_launch", "eager_dispatch", "collective_call", "host_round_trip",
       "first_call", "kv_expansion", "cuda_graphs", "other_kernels_per_layer", "collective_algorithm",
       "partial_o_bytes", "ring", "prefill", "engine_step", "uncertainty", "per_layer"});
  ImplProfile profile;
  profile.origin = file;
  profile.name = map.name("name");
  profile.description = map.name("description");
  profile.implementation = map.name("implementation");
  if (map.has("kernel_launch")) profile.kernel_launch_s = sourced(map, "kernel_launch", profile, duration);
  if (map.has("eager_dispatch")) profile.eager_dispatch_s = sourced(map, "eager_dispatch", profile, duration);
  if (map.has("collective_call")) profile.collective_call_s = sourced(map, "collective_call", profile, duration);
  if (map.has("host_round_trip")) profile.host_round_trip_s = sourced(map, "host_round_trip", profile, duration);
  if (map.has("first_call")) {
    profile.first_call_s = sourced(map, "first_call", profile, [](const StrictMap& m, std::string_view key) {
      return m.long_duration_s(key, 3600.0, "1 hour");
    });
  }
  if (map.has("kv_expansion")) profile.kv_expansion = sourced(map, "kv_expansion", profile, flag);
  if (map.has("cuda_graphs")) profile.cuda_graphs = sourced(map, "cuda_graphs", profile, flag);
  if (map.has("other_kernels_per_layer")) {
    profile.other_kernels_per_layer =
        sourced(map, "other_kernels_per_layer", profile,
                [](const StrictMap& m, std::string_view key) { return m.integer(key, 0, 10000); });
  }
  if (map.has("collective_algorithm")) {
    profile.collective_algorithm = sourced(map, "collective_algorithm", profile,
                                           [](const StrictMap& m, std::string_view key) { return m.name(key); });
  }
  if (map.has("partial_o_bytes")) {
    profile.partial_o_bytes = sourced(map, "partial_o_bytes", profile,
                                      [](const StrictMap& m, std::string_view key) { return m.integer(key, 1, 8); });
  }
  read_ring(map, profile);
  read_prefill(map, profile);
  read_engine_step(map, profile);
  read_uncertainty(map, profile);
  if (YAML::Node list = map.optional("per_layer")) {
    yaml::require_sequence(file, list, "per_layer");
    for (const YAML::Node& entry : list) profile.per_layer.push_back(read_extra(file, entry));
  }
  check_consistency(map, profile);
  return profile;
}

}  // namespace

ImplProfile load_impl_profile_text(const std::string& yaml_text, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& error) {
    throw InputError(yaml::location_of(source_name, error.mark), "YAML syntax: " + error.msg);
  }
  return read_profile(source_name, root);
}

ImplProfile load_impl_profile_file(const std::string& path) {
  return load_impl_profile_text(read_input_file(path), path);
}

const char* to_string(ExtraRanks ranks) {
  switch (ranks) {
    case ExtraRanks::all: return "all";
    case ExtraRanks::last: return "last";
    case ExtraRanks::others: return "others";
  }
  return "all";
}

}  // namespace treering::topologies
