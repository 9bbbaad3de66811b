#include "treering/validate/decodes.hpp"

#include "treering/model/extrapolation.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "treering/model/decode.hpp"
#include "treering/model/realrun_plans.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/input_error.hpp"
#include "json_files.hpp"

namespace treering::validate {
namespace {

using topologies::InputError;

// DecodeCase::noise: the same case (algorithm, workload, batch, length, ranks, backend) measured in several
// files spreads over (largest - smallest) / mean of its medians. Example: 4.4 and 4.6 ms -> 0.2 / 4.5 = 4.4 %.
void assign_noise(std::vector<DecodeCase>& cases) {
  using Key = std::tuple<std::string, std::string, int, long long, int, std::string>;
  std::map<Key, std::vector<double>> medians;
  auto key = [](const DecodeMeasurement& m) {
    return Key{m.algorithm, m.workload, m.batch, m.seq_len, m.ranks, m.backend};
  };
  for (const DecodeCase& c : cases) medians[key(c.measured)].push_back(c.measured.latency_s);
  for (DecodeCase& c : cases) {
    const std::vector<double>& same = medians[key(c.measured)];
    const auto [low, high] = std::minmax_element(same.begin(), same.end());
    const double mean = std::accumulate(same.begin(), same.end(), 0.0) / static_cast<double>(same.size());
    c.noise = std::max(c.measured.spread.value_or(0.0), (*high - *low) / mean);
  }
}

}  // namespace

bool is_decode_file(const std::string& path) {
  const std::optional<nlohmann::json> json = detail::json_object_in(path);
  if (!json) return false;
  const auto results = json->find("results");
  return results != json->end() && results->is_array() && !results->empty() && (*results)[0].is_object() &&
         (*results)[0].contains("algo");
}

std::vector<DecodeMeasurement> read_decode_measurements(const std::string& path) {
  const nlohmann::json json = detail::read_json_file(path);
  auto field = [&](const nlohmann::json& object, const char* key) -> const nlohmann::json& {
    if (!object.is_object() || !object.contains(key))
      throw InputError({path, 0, 0}, std::string("missing '") + key + "' (not a treering-realrun decode file?)");
    return object.at(key);
  };
  std::vector<DecodeMeasurement> out;
  try {
    for (const nlohmann::json& row : field(json, "results")) {
      constexpr double kMaxInt = std::numeric_limits<int>::max();
      out.push_back({field(row, "algo").get<std::string>(),
                     field(row, "workload").get<std::string>(),
                     static_cast<int>(detail::whole_number(field(row, "batch"), 1, kMaxInt, path, "batch")),
                     detail::whole_number(field(row, "seq_len"), 1, 1e15, path, "seq_len"),
                     static_cast<int>(detail::whole_number(field(row, "ranks"), 1, kMaxInt, path, "ranks")),
                     field(field(row, "latency_s"), "median").get<double>(),
                     field(row, "backend").get<std::string>(),
                     {},
                     path});
      const nlohmann::json& latency = row.at("latency_s");
      if (latency.contains("p10") && latency.contains("p90")) {
        out.back().spread = (latency.at("p90").get<double>() - latency.at("p10").get<double>()) / out.back().latency_s;
      }
      // Files written before the loopback had a backend of its own say cuda and name their virtual ranks.
      if (out.back().backend == "cuda" && row.contains("loopback_virtual_ranks")) out.back().backend = "cuda-loopback";
      const std::string& backend = out.back().backend;
      if (backend != "cpu" && backend != "cuda" && backend != "cuda-loopback") {
        throw InputError({path, 0, 0}, "unknown backend '" + backend + "' (cpu, cuda or cuda-loopback)");
      }
      if (!(out.back().latency_s > 0) || out.back().seq_len < 1 || out.back().ranks < 1) {
        throw InputError({path, 0, 0}, "a result needs a positive latency, length and ranks");
      }
    }
  } catch (const nlohmann::json::type_error& error) {
    throw InputError({path, 0, 0}, std::string("a field has the wrong type: ") + error.what());
  }
  if (out.empty()) throw InputError({path, 0, 0}, "no results");
  return out;
}

std::vector<DecodeCase> predict_decodes(const topologies::Topology& topology,
                                        const std::vector<DecodeMeasurement>& measured,
                                        const std::vector<Engine>& engines) {
  std::vector<DecodeCase> cases;
  for (const DecodeMeasurement& m : measured) {
    check_ranks_fit(m.ranks, topology.gpu_count(), m.file);
    std::vector<int> gpus(static_cast<size_t>(m.ranks));
    std::iota(gpus.begin(), gpus.end(), 0);
    const model::DecodeModel decode(topology, gpus);
    model::Workload workload = model::find_workload(m.workload);
    workload.batch = m.batch;
    const model::DecodePlan plan = decode.plan(model::parse_decode_algorithm(m.algorithm), workload, m.seq_len,
                                               model::realrun_plan_options(model::parse_realrun_backend(m.backend)));
    DecodeCase c;
    c.measured = m;
    c.extrapolation = model::join_reasons(model::extrapolations(topology, plan));
    for (Engine engine : engines) {
      c.predicted_s[engine] =
          engine == Engine::model ? decode.evaluate(plan).latency_s : sim::replay_plan(decode, plan).latency_s;
    }
    cases.push_back(std::move(c));
  }
  assign_noise(cases);
  return cases;
}

std::vector<ErrorSummary> summarise(const std::vector<DecodeCase>& cases, const std::vector<Engine>& engines) {
  std::vector<ErrorSummary> summaries;
  for (Engine engine : engines) {
    std::map<std::string, std::vector<double>> errors;
    for (const DecodeCase& c : cases) errors[c.measured.algorithm].push_back(std::abs(c.error(engine)));
    std::map<std::string, std::vector<double>> noise;
    for (const DecodeCase& c : cases) noise[c.measured.algorithm].push_back(c.noise);
    for (const auto& [algorithm, values] : errors) {
      summaries.push_back(summary_of(engine, algorithm, values));
      summaries.back().median_noise = summary_of(engine, algorithm, noise[algorithm]).median_abs_rel_error;
    }
  }
  return summaries;
}

}  // namespace treering::validate
