// The columns of a decode row (predict, simulate, sweep; the Python rows): one list, each column with its name,
// where JSON puts it, its unit and how to read it from a row. The CSV header and lines, the JSON objects and the
// Python records are all written from it, so they carry the same columns with the same values; the sweep's
// worker processes send whole rows (sweep_wire.hpp), from which the same columns are read.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "treering/analysis/decode_output.hpp"

namespace treering::analysis {

// One value: nothing (an empty CSV field, JSON null, Python None), text, a whole number or a number.
using Cell = std::variant<std::monostate, std::string, long long, double>;

// Which rows carry a column: all, or those the command computed it for (--prefill, --tokens, the model's figure
// beside a simulated or swept one, the simulator's transfer count, --scope layer|step).
enum class Carried { always, prefill, generation, model_latency, transfers, step };

struct DecodeColumn {
  std::string_view name;       // the CSV header's and the Python record's key
  std::string_view json_path;  // where the JSON object has it: "latency_s", "breakdown.compute_s"
  std::string_view unit;       // "s", "bytes", "tokens", "GPUs", "tokens/s", or "" for text and counts
  Carried carried;
  Cell (*cell)(const DecodeRow&);
};

// Every column, in the CSV's order.
const std::vector<DecodeColumn>& decode_columns();

// Whether `row` carries columns of this kind.
bool carries(const DecodeRow& row, Carried carried);

// The columns `row` carries, in order.
std::vector<const DecodeColumn*> columns_of(const DecodeRow& row);

// Puts `cell` at the column's path of `json` ("a.b": json["a"]["b"]); a number that is not finite becomes null
// (JSON has no infinity).
void put_json(nlohmann::ordered_json& json, std::string_view path, const Cell& cell);

// The value at `path` of `json`, or nullptr when it has none.
const nlohmann::ordered_json* find_json(const nlohmann::ordered_json& json, std::string_view path);

}  // namespace treering::analysis
