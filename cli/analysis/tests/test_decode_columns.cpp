// The decode row's one list of columns (cli/analysis/include/treering/analysis/decode_columns.hpp) against every format
// it feeds: the CSV header and line, the JSON object (each column at its path) and the row sent by the sweep's worker
// processes carry the same columns with the same values. (The Python records: cli/python/tests,
// SameRowsAsTheCommandTest.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "treering/analysis/csv.hpp"
#include "treering/analysis/decode_columns.hpp"
#include "treering/analysis/decode_output.hpp"
#include "full_row.hpp"
#include "treering/analysis/sweep_wire.hpp"

using namespace treering::analysis;
using treering::analysis::testing::full_row;

namespace {

// Splits a CSV line written by CsvRecord whose fields hold no comma, quote or line break (full_row's do not).
std::vector<std::string> split_plain_csv(std::string line) {
  REQUIRE(!line.empty());
  REQUIRE(line.back() == '\n');
  line.pop_back();
  std::vector<std::string> fields(1);
  for (char ch : line) {
    if (ch == ',') {
      fields.emplace_back();
    } else {
      REQUIRE(ch != '"');
      fields.back() += ch;
    }
  }
  return fields;
}

// The cell as the CSV reads back: text as is, numbers through strtod/strtoll (the shortest text of a double reads
// back as the same double), nothing as an empty field.
void check_csv_field(const std::string& field, const Cell& cell) {
  if (const auto* text = std::get_if<std::string>(&cell)) {
    CHECK(field == *text);
  } else if (const auto* whole = std::get_if<long long>(&cell)) {
    CHECK(std::strtoll(field.c_str(), nullptr, 10) == *whole);
  } else if (const auto* number = std::get_if<double>(&cell)) {
    const double back = std::strtod(field.c_str(), nullptr);
    CHECK(((std::isnan(back) && std::isnan(*number)) || back == *number));
  } else {
    CHECK(field.empty());
  }
}

// The cell as JSON has it: numbers that are not finite as null (JSON has no infinity or NaN).
void check_json_value(const nlohmann::ordered_json* value, const Cell& cell) {
  REQUIRE(value != nullptr);
  if (const auto* text = std::get_if<std::string>(&cell)) {
    CHECK(*value == *text);
  } else if (const auto* whole = std::get_if<long long>(&cell)) {
    CHECK(*value == *whole);
  } else if (const auto* number = std::get_if<double>(&cell); number && std::isfinite(*number)) {
    CHECK(value->get<double>() == *number);
  } else {
    CHECK(value->is_null());
  }
}

bool same_cell(const Cell& a, const Cell& b) {
  const auto* x = std::get_if<double>(&a);
  const auto* y = std::get_if<double>(&b);
  if (x && y) return (std::isnan(*x) && std::isnan(*y)) || (std::signbit(*x) == std::signbit(*y) && *x == *y);
  return a == b;
}

}  // namespace

TEST_CASE("columns: names and JSON paths are unique, every one has a getter") {
  std::set<std::string> names, paths;
  for (const DecodeColumn& column : decode_columns()) {
    CAPTURE(column.name);
    CHECK(names.insert(std::string(column.name)).second);
    CHECK(paths.insert(std::string(column.json_path)).second);
    CHECK(static_cast<bool>(column.cell));
  }
}

TEST_CASE("columns: a row with every field carries every column, alike in CSV, JSON and the sweep's wire") {
  const DecodeRow row = full_row();
  const std::vector<const DecodeColumn*> columns = columns_of(row);
  REQUIRE(columns.size() == decode_columns().size());  // every optional present: every column
  const std::vector<std::string> header = split_plain_csv(decode_csv_header(row));
  const std::vector<std::string> line = split_plain_csv(decode_csv_line(row, row));
  const nlohmann::ordered_json json = decode_json(row);
  const DecodeRow sent = decode_row(encode_row(row));
  REQUIRE(header.size() == columns.size());
  REQUIRE(line.size() == columns.size());
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const DecodeColumn& column = *columns[i];
    CAPTURE(column.name);
    const Cell cell = column.cell(row);
    CHECK(header[i] == column.name);
    check_csv_field(line[i], cell);
    check_json_value(find_json(json, column.json_path), cell);
    CHECK(same_cell(column.cell(sent), cell));
  }
}

TEST_CASE("columns: a row without the optional fields has only the columns every row has") {
  DecodeRow row = full_row();
  row.prefill_s.reset();
  row.generation_s.reset();
  row.generation_band.reset();
  row.model_latency_s.reset();
  row.transfers_simulated.reset();
  row.step.reset();
  const nlohmann::ordered_json json = decode_json(row);
  const std::vector<std::string> header = split_plain_csv(decode_csv_header(row));
  std::size_t always = 0;
  for (const DecodeColumn& column : decode_columns()) {
    CAPTURE(column.name);
    const bool carried = column.carried == Carried::always;
    always += carried ? 1 : 0;
    CHECK((find_json(json, column.json_path) != nullptr) == carried);
  }
  CHECK(header.size() == always);
  CHECK(json["scope"] == "attention");  // the scope is a column of every row: the attention alone here
}

TEST_CASE("columns: --scope layer makes no token, so tokens_per_s is empty in CSV and null in JSON") {
  DecodeRow row = full_row();  // its step is a layer's
  REQUIRE(row.step->scope == treering::model::Scope::layer);
  const nlohmann::ordered_json json = decode_json(row);
  CHECK(json["tokens_per_s"].is_null());
  CHECK(json["scope"] == "layer");
  const std::vector<std::string> header = split_plain_csv(decode_csv_header(row));
  const std::vector<std::string> line = split_plain_csv(decode_csv_line(row, row));
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "tokens_per_s") CHECK(line[i].empty());
  }
}
