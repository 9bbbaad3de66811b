// TensorRT-LLM's trtllm-bench reports (trtllm_runs.hpp).
#include "trtllm_runs.hpp"

#include <cmath>

#include "json_files.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate::detail {
namespace {

using topologies::InputError;

// A positive, finite number (a mean length or a time in ms) at json[section][key].
double positive(const nlohmann::json& json, const char* section, const char* key, const std::string& path) {
  const nlohmann::json& value = json.at(section).at(key);
  const double number = value.get<double>();
  if (!(number > 0 && std::isfinite(number)))
    throw InputError({path, 0, 0}, std::string(section) + "." + key + " must be positive, got " + value.dump());
  return number;
}

// A mean count of the report rounded to a whole number in [minimum, 1e9]; InputError naming it otherwise.
long long rounded(double mean, double minimum, const std::string& path, const char* what) {
  const double whole = std::round(mean);
  if (!(whole >= minimum && whole <= 1e9))
    throw InputError({path, 0, 0}, std::string(what) + " must round to " + std::to_string(int(minimum)) +
                                       " to 1e9, got " + nlohmann::json(mean).dump());
  return static_cast<long long>(whole);
}

}  // namespace

bool is_trtllm_bench_report(const nlohmann::json& json) {
  return json.is_object() && json.contains("engine") && json.contains("world_info") && json.contains("request_info") &&
         json.contains("performance");
}

EngineRun run_from_trtllm_bench(const nlohmann::json& json, const std::string& path) {
  EngineRun run;
  run.file = path;
  run.benchmark = "serve";
  const std::string version = string_member(json.at("engine"), "version");
  run.engine = version.empty() ? "trtllm" : "trtllm " + version;
  run.model = json.at("engine").at("model").get<std::string>();
  const nlohmann::json& world = json.at("world_info");
  run.tp = static_cast<int>(whole_number(world.at("tp_size"), 1, 1024, path, "world_info.tp_size"));
  if (whole_number(world.at("pp_size"), 1, 1024, path, "world_info.pp_size") != 1)
    throw InputError({path, 0, 0}, "pipeline parallelism (world_info.pp_size > 1) is not predicted");
  if (!json.contains("streaming_metrics") || !json.at("streaming_metrics").is_object()) {
    throw InputError({path, 0, 0},
                     "no streaming_metrics: trtllm-bench measures the TPOT only with --streaming (rerun with "
                     "--streaming --concurrency N)");
  }
  run.batch = static_cast<int>(
      rounded(positive(json, "request_info", "avg_num_concurrent_requests", path), 1, path, "the mean concurrency"));
  run.input_len = rounded(positive(json, "request_info", "avg_input_length", path), 1, path, "the mean input length");
  run.output_len =
      rounded(positive(json, "request_info", "avg_output_length", path), 2, path, "the mean output length");
  run.measured_s = 1e-3 * positive(json, "streaming_metrics", "avg_tpot_ms", path);
  if (json.at("streaming_metrics").contains("avg_ttft_ms"))
    run.mean_ttft_s = 1e-3 * positive(json, "streaming_metrics", "avg_ttft_ms", path);
  return run;
}

}  // namespace treering::validate::detail
