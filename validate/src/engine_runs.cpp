// Reading vLLM's latency benchmark files (engine_runs.hpp).
#include "treering/validate/engine_runs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "json_files.hpp"
#include "engine_tables.hpp"
#include "sglang_runs.hpp"
#include "trtllm_runs.hpp"
#include "treering/model/statistics.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate {
namespace {

using topologies::InputError;

const char* const kSettingsHelp =
    "the settings (batch_size, input_len, output_len, tensor_parallel_size, model) are missing: vLLM writes them "
    "to the .pytorch.json beside the results when run with SAVE_TO_PYTORCH_BENCHMARK_FORMAT=1; or add those keys to "
    "the results file";

// vLLM's results file: an object with a list of latencies.
bool is_results_object(const nlohmann::json& json) {
  const auto latencies = json.find("latencies");
  return json.is_object() && latencies != json.end() && latencies->is_array() && json.contains("avg_latency");
}

// vLLM's serving benchmark result: an object with the mean TPOT, the model and the concurrency.
bool is_serve_object(const nlohmann::json& json) {
  return json.is_object() && json.contains("mean_tpot_ms") && json.contains("model_id") &&
         json.contains("max_concurrency");
}

// The .pytorch.json record of the latency metric; nullptr when `json` is none.
const nlohmann::json* latency_record(const nlohmann::json& json) {
  if (!json.is_array()) return nullptr;
  for (const nlohmann::json& record : json) {
    if (!record.is_object()) continue;
    const auto metric = record.find("metric");
    if (metric == record.end() || !metric->is_object()) continue;
    if (detail::string_member(*metric, "name") == "latency" && record.contains("benchmark")) return &record;
  }
  return nullptr;
}

std::vector<double> latencies_from(const nlohmann::json& values, const std::string& path) {
  std::vector<double> out;
  for (const nlohmann::json& value : values) {
    const double latency_s = value.get<double>();
    if (!(latency_s > 0 && std::isfinite(latency_s)))
      throw InputError({path, 0, 0}, "a latency must be a positive number of seconds, got " + value.dump());
    out.push_back(latency_s);
  }
  if (out.empty()) throw InputError({path, 0, 0}, "no latencies");
  return out;
}

// The settings from an object holding vLLM's argument names; false when any is missing.
bool read_settings(const nlohmann::json& args, const std::string& path, EngineRun& run) {
  for (const char* key : {"batch_size", "input_len", "output_len", "tensor_parallel_size", "model"}) {
    if (!args.contains(key) || args.at(key).is_null()) return false;
  }
  run.batch = static_cast<int>(detail::whole_number(args.at("batch_size"), 1, 1e6, path, "batch_size"));
  run.input_len = detail::whole_number(args.at("input_len"), 1, 1e9, path, "input_len");
  run.output_len = detail::whole_number(args.at("output_len"), 1, 1e9, path, "output_len");
  run.tp =
      static_cast<int>(detail::whole_number(args.at("tensor_parallel_size"), 1, 1024, path, "tensor_parallel_size"));
  run.model = args.at("model").get<std::string>();
  if (args.contains("n") && !args.at("n").is_null() && args.at("n").get<double>() != 1)
    throw InputError({path, 0, 0}, "n = " + args.at("n").dump() + " sequences a prompt: only n = 1 is predicted");
  if (args.contains("use_beam_search") && args.at("use_beam_search").is_boolean() &&
      args.at("use_beam_search").get<bool>())
    throw InputError({path, 0, 0}, "beam search is not predicted");
  return true;
}

// The .pytorch.json beside a results file: F's stem + ".pytorch.json".
std::string sibling_of(const std::string& path) {
  std::filesystem::path sibling(path);
  sibling.replace_extension(".pytorch.json");
  return sibling.string();
}

EngineRun run_from_record(const nlohmann::json& record, const std::string& path) {
  EngineRun run;
  run.file = path;
  const nlohmann::json& args = record.at("benchmark").at("extra_info").at("args");
  if (!read_settings(args, path, run)) throw InputError({path, 0, 0}, kSettingsHelp);
  run.latencies_s = latencies_from(record.at("metric").at("benchmark_values"), path);
  return run;
}

EngineRun run_from_results(const nlohmann::json& results, const std::string& path) {
  EngineRun run;
  run.file = path;
  run.latencies_s = latencies_from(results.at("latencies"), path);
  if (read_settings(results, path, run)) return run;
  const std::string sibling = sibling_of(path);
  if (sibling == path || !std::filesystem::is_regular_file(sibling)) throw InputError({path, 0, 0}, kSettingsHelp);
  // checked and noted as an input of this run: no output may replace it
  const std::optional<nlohmann::json> records = detail::json_value_in(sibling);
  const nlohmann::json* record = records ? latency_record(*records) : nullptr;
  if (record == nullptr)
    throw InputError({path, 0, 0}, std::string(kSettingsHelp) + " (" + sibling + " holds no latency record)");
  const EngineRun settings = run_from_record(*record, sibling);
  run.batch = settings.batch, run.input_len = settings.input_len, run.output_len = settings.output_len;
  run.tp = settings.tp, run.model = settings.model;
  return run;
}

// A positive, finite number of milliseconds, in seconds.
double milliseconds(const nlohmann::json& value, const std::string& path, const char* key) {
  const double ms = value.get<double>();
  if (!(ms > 0 && std::isfinite(ms)))
    throw InputError({path, 0, 0}, std::string("'") + key + "' must be a positive time, got " + value.dump());
  return ms * 1e-3;
}

EngineRun run_from_serve(const nlohmann::json& json, const std::string& path) {
  EngineRun run;
  run.file = path;
  run.benchmark = "serve";
  run.model = json.at("model_id").get<std::string>();
  if (json.at("max_concurrency").is_null()) {
    throw InputError({path, 0, 0},
                     "no max_concurrency: treering predicts a fixed number of requests decoding at once "
                     "(vllm bench serve --max-concurrency N --request-rate inf)");
  }
  const auto rate = json.find("request_rate");
  if (rate == json.end() || !rate->is_string() || rate->get<std::string>() != "inf") {
    throw InputError({path, 0, 0}, "request_rate " + (rate == json.end() ? std::string("missing") : rate->dump()) +
                                       ": requests arriving at a rate decode at a varying concurrency; treering "
                                       "predicts a fixed one (--request-rate inf with --max-concurrency N)");
  }
  run.batch = static_cast<int>(detail::whole_number(json.at("max_concurrency"), 1, 1e6, path, "max_concurrency"));
  const double completed = static_cast<double>(detail::whole_number(json.at("completed"), 1, 1e12, path, "completed"));
  // The means, checked as doubles before they become integers (llround of 1e300 is unspecified).
  const double input = std::round(json.at("total_input_tokens").get<double>() / completed);
  const double output = std::round(json.at("total_output_tokens").get<double>() / completed);
  if (!(input >= 1 && input <= 1e9) || !(output >= 2 && output <= 1e9)) {
    throw InputError({path, 0, 0},
                     "the mean prompt must hold 1 to 1e9 tokens and the mean output 2 to 1e9 (a TPOT "
                     "needs two), got " +
                         nlohmann::json(input).dump() + " and " + nlohmann::json(output).dump());
  }
  run.input_len = static_cast<long long>(input);
  run.output_len = static_cast<long long>(output);
  const char* tp_key = json.contains("tensor_parallel_size") ? "tensor_parallel_size" : "tp";
  if (!json.contains(tp_key)) {
    throw InputError({path, 0, 0},
                     "the server's tensor parallelism is not in the file: run vllm bench serve with "
                     "--metadata tensor_parallel_size=N, or add that key");
  }
  run.tp = static_cast<int>(detail::setting_number(json.at(tp_key), 1, 1024, path, tp_key));
  run.measured_s = milliseconds(json.at("mean_tpot_ms"), path, "mean_tpot_ms");
  // Optional times, read when present as numbers: the mean TTFT and the median and 99th-percentile ITL.
  const auto optional_ms = [&](const char* key) {
    return json.contains(key) && json.at(key).is_number() ? milliseconds(json.at(key), path, key) : 0.0;
  };
  run.mean_ttft_s = optional_ms("mean_ttft_ms");
  run.median_itl_s = optional_ms("median_itl_ms");
  run.p99_itl_s = optional_ms("p99_itl_ms");
  return run;
}

std::string letters_and_digits(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// A release suffix after the size, "7b" + "v01" (Mistral-7B-v0.1), dropped; "deepseekv3" keeps its "v3".
void drop_release_suffix(std::string& key) {
  const auto v = key.find_last_of('v');
  if (v == std::string::npos || v + 1 == key.size() || v < 2 || key[v - 1] != 'b' ||
      !std::isdigit(static_cast<unsigned char>(key[v - 2])))
    return;
  const bool digits = std::all_of(key.begin() + static_cast<long>(v) + 1, key.end(),
                                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  if (digits) key.erase(v);
}

}  // namespace

std::string workload_for_model(const std::string& model_id) {
  std::string name =
      model_id.substr(model_id.find_last_of('/') == std::string::npos ? 0 : model_id.find_last_of('/') + 1);
  std::string key = letters_and_digits(name);
  if (key.rfind("meta", 0) == 0) key = key.substr(4);
  for (const std::string suffix : {"instruct", "chat", "hf"}) {
    const auto at = key.find(suffix);
    if (at != std::string::npos) key.erase(at, suffix.size());
  }
  drop_release_suffix(key);
  for (const model::Workload& preset : model::workload_presets()) {
    if (letters_and_digits(preset.name) == key) return preset.name;
  }
  return "";
}

namespace {

// The workload preset the run's model is; InputError naming the file when none.
void resolve_workload(EngineRun& run, const std::string& path) {
  run.workload = workload_for_model(run.model);
  if (run.workload.empty()) {
    throw InputError({path, 0, 0}, "model '" + run.model +
                                       "' is no workload preset (treering workload list): name one of them, e.g. "
                                       "meta-llama/Llama-3.1-8B-Instruct");
  }
}

}  // namespace

bool is_engine_benchmark_file(const std::string& path) {
  const std::optional<nlohmann::json> json = detail::json_value_in(path);
  if (json && (is_results_object(*json) || is_serve_object(*json) || latency_record(*json) != nullptr ||
               detail::is_trtllm_bench_report(*json)))
    return true;
  return detail::is_one_batch_file(path) || detail::is_engine_table_file(path);
}

EngineRun read_engine_run(const std::string& path) {
  const nlohmann::json json = detail::read_json_file(path);
  EngineRun run;
  try {
    if (is_results_object(json)) {
      run = run_from_results(json, path);
    } else if (is_serve_object(json)) {
      run = run_from_serve(json, path);
    } else if (const nlohmann::json* record = latency_record(json)) {
      run = run_from_record(*record, path);
    } else if (detail::is_trtllm_bench_report(json)) {
      run = detail::run_from_trtllm_bench(json, path);
    } else {
      throw InputError({path, 0, 0},
                       "not a vLLM or trtllm-bench file (no 'latencies', no latency record, no 'mean_tpot_ms', no "
                       "'world_info')");
    }
  } catch (const nlohmann::json::exception& error) {
    throw InputError({path, 0, 0}, std::string("not a vLLM or trtllm-bench file: ") + error.what());
  }
  resolve_workload(run, path);
  if (run.benchmark == "latency") run.measured_s = model::median(run.latencies_s);
  return run;
}

std::vector<EngineRun> read_engine_runs(const std::string& path) {
  topologies::check_input_file(path);
  std::vector<EngineRun> runs;
  if (detail::is_one_batch_file(path)) {
    runs = detail::read_one_batch_runs(path);
  } else if (detail::is_engine_table_file(path)) {
    runs = detail::read_engine_table_runs(path);
  } else {
    return {read_engine_run(path)};
  }
  for (EngineRun& run : runs) resolve_workload(run, path);
  return runs;
}

}  // namespace treering::validate
