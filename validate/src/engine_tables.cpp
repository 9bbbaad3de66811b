// Engine measurements as tables (engine_tables.hpp).
#include "engine_tables.hpp"

#include <algorithm>
#include <fstream>
#include <map>

#include "csv_fields.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate::detail {
namespace {

using topologies::InputError;
using topologies::InputLocation;

constexpr const char* kTableHeader = "engine,version,model,tp,batch,input_len,output_len,quantity,measured_s";
constexpr const char* kPromptsColumn = ",prompts";  // optional, last

bool is_table_header(const std::string& line) {
  return line == kTableHeader || line == std::string(kTableHeader) + kPromptsColumn;
}

// The lines of `path` that are neither blank nor '#' comments, with their line numbers.
std::vector<std::pair<int, std::string>> content_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, "cannot open the file");
  std::vector<std::pair<int, std::string>> lines;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string text = trimmed(line);
    if (!text.empty() && text[0] != '#') lines.emplace_back(number, text);
  }
  return lines;
}

bool has(const std::vector<std::string>& fields, const char* name) {
  return std::find(fields.begin(), fields.end(), name) != fields.end();
}

bool is_lmdeploy_header(const std::vector<std::string>& fields) {
  return has(fields, "batch") && has(fields, "prompt_tokens") && has(fields, "50%(s)");
}

// A row's fields by its header's names.
class Row {
 public:
  Row(const std::vector<std::string>& header, const std::vector<std::string>& fields, InputLocation where)
      : where_(std::move(where)) {
    if (fields.size() != header.size()) {
      throw InputError(where_, "expected " + std::to_string(header.size()) + " fields, as the header has, got " +
                                   std::to_string(fields.size()));
    }
    for (std::size_t i = 0; i < header.size(); ++i) by_name_[header[i]] = fields[i];
  }
  const std::string& text(const char* name) const {
    const std::string& value = by_name_.at(name);
    if (value.empty()) throw InputError(where_, std::string("empty ") + name);
    return value;
  }
  long long count(const char* name, long long smallest, long long largest) const {
    return whole(text(name), smallest, largest, where_, name);
  }
  double time_s(const char* name) const { return seconds(text(name), where_, name); }
  bool has(const char* name) const { return by_name_.count(name) > 0; }

 private:
  InputLocation where_;
  std::map<std::string, std::string> by_name_;
};

EngineRun lmdeploy_run(const Row& row, const char* output_column) {
  EngineRun run;
  run.engine = "lmdeploy";
  run.benchmark = "step";
  run.model = row.text("model");
  run.tp = static_cast<int>(row.count("tp", 1, 1024));
  run.batch = static_cast<int>(row.count("batch", 1, 1000000));
  run.input_len = row.count("prompt_tokens", 1, 1000000000);
  run.output_len = row.count(output_column, 2, 1000000000);
  run.measured_s = row.time_s("50%(s)");
  return run;
}

EngineRun table_run(const Row& row, const InputLocation& where) {
  EngineRun run;
  run.engine = row.text("engine") + " " + row.text("version");
  run.benchmark = row.text("quantity");
  if (run.benchmark != "latency" && run.benchmark != "step")
    throw InputError(where, "quantity must be latency or step, got '" + run.benchmark + "'");
  run.model = row.text("model");
  run.tp = static_cast<int>(row.count("tp", 1, 1024));
  run.batch = static_cast<int>(row.count("batch", 1, 1000000));
  run.input_len = row.count("input_len", 1, 1000000000);
  run.output_len = row.count("output_len", 2, 1000000000);
  run.measured_s = row.time_s("measured_s");
  if (run.benchmark == "latency") run.latencies_s = {run.measured_s};
  if (row.has("prompts")) {
    const std::string& prompts = row.text("prompts");
    if (prompts != "distinct" && prompts != "identical")
      throw InputError(where, "prompts must be distinct or identical, got '" + prompts + "'");
    run.identical_sequences = prompts == "identical";
  }
  return run;
}

// The output column LMDeploy's header names; InputError when the model or tp column is missing.
const char* lmdeploy_columns(const std::vector<std::string>& header, const InputLocation& where) {
  if (!has(header, "model") || !has(header, "tp")) {
    throw InputError(where,
                     "lmdeploy's profile_generation CSV names neither the model nor the TP: add columns \"model\" "
                     "(its Hugging Face id) and \"tp\" (the --tp it ran with)");
  }
  if (has(header, "completion_tokens")) return "completion_tokens";
  if (has(header, "output_tokens")) return "output_tokens";
  throw InputError(where, "no completion_tokens (or output_tokens) column");
}

}  // namespace

bool is_engine_table_file(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const std::string text = trimmed(line);
    if (text.empty() || text[0] == '#') continue;
    return is_table_header(text) || is_lmdeploy_header(fields_of(text));
  }
  return false;
}

std::vector<EngineRun> read_engine_table_runs(const std::string& path) {
  const std::vector<std::pair<int, std::string>> lines = content_lines(path);
  if (lines.empty()) throw InputError({path, 0, 0}, "no header line");
  const std::vector<std::string> header = fields_of(lines.front().second);
  const bool ours = is_table_header(lines.front().second);
  if (!ours && !is_lmdeploy_header(header)) {
    throw InputError({path, lines.front().first, 0},
                     std::string("not an engine table: the header must be ") + kTableHeader + "[" + kPromptsColumn +
                         "]" + ", or lmdeploy profile_generation's (batch, prompt_tokens, ..., 50%(s), ...)");
  }
  const char* output_column = ours ? "output_len" : lmdeploy_columns(header, {path, lines.front().first, 0});
  std::vector<EngineRun> runs;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const InputLocation where{path, lines[i].first, 0};
    const Row row(header, fields_of(lines[i].second), where);
    EngineRun run = ours ? table_run(row, where) : lmdeploy_run(row, output_column);
    run.file = path + " line " + std::to_string(lines[i].first);
    runs.push_back(run);
  }
  if (runs.empty()) throw InputError({path, 0, 0}, "no runs (a header line, then a row per run)");
  return runs;
}

}  // namespace treering::validate::detail
