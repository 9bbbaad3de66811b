// SGLang's one-batch benchmark, read as it writes it (engine_runs.hpp).
#include "sglang_runs.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "json_files.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate::detail {
namespace {

using topologies::InputError;

// A line of `python -m sglang.bench_one_batch --result-filename F`: one (batch, input, output) of the sweep.
bool is_one_batch_line(const nlohmann::json& line) {
  return line.is_object() && line.contains("run_name") && line.contains("batch_size") && line.contains("input_len") &&
         line.contains("output_len") && line.contains("prefill_latency");
}

// The non-blank lines of `path` as JSON values; nothing when one is not JSON.
std::optional<std::vector<nlohmann::json>> json_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  std::string text;
  while (std::getline(in, text)) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      lines.push_back(nlohmann::json::parse(text));
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  }
  return lines;
}

const char* first_key(const nlohmann::json& line, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (line.contains(key) && !line.at(key).is_null()) return key;
  }
  return nullptr;
}

EngineRun run_of(const nlohmann::json& line, const std::string& path, int number) {
  EngineRun run;
  run.engine = "sglang";
  run.benchmark = "step";
  run.file = path + " line " + std::to_string(number);
  run.batch = static_cast<int>(whole_number(line.at("batch_size"), 1, 1e6, path, "batch_size"));
  run.input_len = whole_number(line.at("input_len"), 1, 1e9, path, "input_len");
  run.output_len = whole_number(line.at("output_len"), 1, 1e9, path, "output_len");
  const char* model = first_key(line, {"model_path", "model"});
  const char* tp = first_key(line, {"tp_size", "tensor_parallel_size"});
  if (model == nullptr || tp == nullptr) {
    throw InputError({path, number, 0},
                     "sglang.bench_one_batch writes neither the model nor its TP: add "
                     "\"model_path\" and \"tp_size\" to each line (the --model-path and --tp-size "
                     "it ran with)");
  }
  run.model = line.at(model).get<std::string>();
  run.tp = static_cast<int>(setting_number(line.at(tp), 1, 1024, path, tp));
  if (!line.contains("median_decode_latency")) {
    throw InputError({path, number, 0}, "no median_decode_latency: an output_len of 1 times no decode step");
  }
  const double step_s = line.at("median_decode_latency").get<double>();
  if (!(step_s > 0 && std::isfinite(step_s)))
    throw InputError({path, number, 0},
                     "'median_decode_latency' must be a positive time, got " + line.at("median_decode_latency").dump());
  run.measured_s = step_s;
  return run;
}

}  // namespace

bool is_one_batch_file(const std::string& path) {
  const std::optional<std::vector<nlohmann::json>> lines = json_lines(path);
  if (!lines || lines->empty()) return false;
  for (const nlohmann::json& line : *lines) {
    if (!is_one_batch_line(line)) return false;
  }
  return true;
}

std::vector<EngineRun> read_one_batch_runs(const std::string& path) {
  const std::optional<std::vector<nlohmann::json>> lines = json_lines(path);
  if (!lines || lines->empty()) throw InputError({path, 0, 0}, "not JSON lines of sglang.bench_one_batch");
  std::vector<EngineRun> runs;
  int number = 0;
  for (const nlohmann::json& line : *lines) {
    ++number;
    if (!is_one_batch_line(line)) throw InputError({path, number, 0}, "not a line of sglang.bench_one_batch");
    try {
      runs.push_back(run_of(line, path, number));
    } catch (const nlohmann::json::exception& error) {
      throw InputError({path, number, 0}, std::string("not a line of sglang.bench_one_batch: ") + error.what());
    }
  }
  return runs;
}

}  // namespace treering::validate::detail
