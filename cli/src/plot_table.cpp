#include "plot_table.hpp"

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "treering/analysis/decode_columns.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using topologies::InputError;

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "none" : topologies::format_list(names);
}

// The whole field as a double, or nothing ("8", "1e-05", "inf" read; "", " 8", "8 GB", "tree" do not).
std::optional<double> number_of(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// RFC 4180 records: fields split at commas outside quotes, records at line breaks outside quotes ("\r\n" too).
// Each record comes with the line it starts on.
std::vector<std::pair<int, std::vector<std::string>>> csv_records(const std::string& text, const std::string& source) {
  std::vector<std::pair<int, std::vector<std::string>>> records;
  std::vector<std::string> fields{""};
  bool quoted = false, any = false;
  int line = 1, start = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"')
        fields.back() += text[++i];
      else if (ch == '"')
        quoted = false;
      else
        fields.back() += ch;
      if (ch == '\n') ++line;
      continue;
    }
    if (ch == '"' && fields.back().empty())
      quoted = any = true;
    else if (ch == ',')
      fields.emplace_back(), any = true;
    else if (ch == '\n' || (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      if (ch == '\r') ++i;
      if (any) records.push_back({start, std::move(fields)});
      fields.assign(1, "");
      any = false;
      start = ++line;
    } else {
      fields.back() += ch;
      any = true;
    }
  }
  if (quoted) throw InputError({source, start, 1}, "a quoted field is not closed");
  if (any) records.push_back({start, std::move(fields)});
  return records;
}

TableCell json_cell(const nlohmann::ordered_json& value) {
  if (value.is_null()) return {};
  if (value.is_string()) return {value.get<std::string>(), std::nullopt};
  if (value.is_number()) return {value.dump(), value.get<double>()};
  return {value.dump(), std::nullopt};  // true, false
}

// One row's cells by dotted name; arrays (links, phases) are left out.
void flatten(const nlohmann::ordered_json& object, const std::string& prefix,
             std::vector<std::pair<std::string, TableCell>>& out) {
  for (const auto& [key, value] : object.items()) {
    if (value.is_object())
      flatten(value, prefix + key + ".", out);
    else if (!value.is_array())
      out.emplace_back(prefix + key, json_cell(value));
  }
}

// The decode rows' nested columns under their CSV names too ("breakdown.compute_s" as "compute_s").
void add_csv_names(DataTable& table) {
  std::map<std::string, std::size_t> index;
  for (std::size_t c = 0; c < table.columns.size(); ++c) index[table.columns[c]] = c;
  for (const DecodeColumn& column : decode_columns()) {
    const auto found = index.find(std::string(column.json_path));
    if (column.json_path == column.name || found == index.end() || index.count(std::string(column.name))) continue;
    table.columns.emplace_back(column.name);
    for (auto& row : table.rows) row.push_back(row[found->second]);
  }
}

}  // namespace

std::size_t DataTable::column(const std::string& name) const {
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] == name) return c;
  }
  throw InputError({source, 0, 0}, "no column '" + name + "' (columns: " + joined(columns) + ")");
}

bool DataTable::numeric(std::size_t column) const {
  bool any = false;
  for (const auto& row : rows) {
    if (row[column].empty()) continue;
    if (!row[column].number) return false;
    any = true;
  }
  return any;
}

std::size_t DataTable::numeric_column(const std::string& name) const {
  const std::size_t c = column(name);
  if (numeric(c)) return c;
  std::vector<std::string> numbers;
  for (std::size_t n = 0; n < columns.size(); ++n) {
    if (numeric(n)) numbers.push_back(columns[n]);
  }
  throw InputError({source, 0, 0}, "column '" + name + "' is not numeric (numeric columns: " + joined(numbers) + ")");
}

DataTable parse_csv_table(const std::string& text, const std::string& source) {
  auto records = csv_records(text, source);
  if (records.empty()) throw InputError({source, 0, 0}, "the file is empty");
  DataTable table{source, std::move(records.front().second), {}};
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& [line, fields] = records[r];
    if (fields.size() != table.columns.size()) {
      throw InputError({source, line, 1}, std::to_string(fields.size()) + " fields, the header has " +
                                              std::to_string(table.columns.size()));
    }
    auto& row = table.rows.emplace_back();
    for (const std::string& field : fields) row.push_back({field, number_of(field)});
  }
  if (table.rows.empty()) throw InputError({source, 0, 0}, "no rows under the header");
  return table;
}

DataTable parse_json_table(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError({source, 0, 0}, "the file is empty");
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    throw InputError({source, 0, 0}, std::string("not JSON: ") + error.what());
  }
  if (!json.is_array() || json.empty() || !json.front().is_object()) {
    throw InputError({source, 0, 0}, std::string(json.is_array() && json.empty()
                                                     ? "no rows (an empty list)"
                                                     : "not a list of rows (what predict, simulate, sweep, crossover, "
                                                       "collective and tune write with --format json)"));
  }
  DataTable table{source, {}, {}};
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<std::pair<std::string, TableCell>>> flat;
  for (const auto& object : json) {
    if (!object.is_object())
      throw InputError({source, 0, 0}, "row " + std::to_string(flat.size() + 1) + " is not an object");
    flatten(object, "", flat.emplace_back());
    for (const auto& [name, cell] : flat.back()) {
      if (index.emplace(name, table.columns.size()).second) table.columns.push_back(name);
    }
  }
  for (const auto& cells : flat) {
    auto& row = table.rows.emplace_back(table.columns.size());
    for (const auto& [name, cell] : cells) row[index.at(name)] = cell;
  }
  add_csv_names(table);
  return table;
}

DataTable read_table(const std::string& path) {
  const bool csv = path.ends_with(".csv"), json = path.ends_with(".json");
  if (!csv && !json) {
    throw InputError({path, 0, 0},
                     "not a .csv or .json file: plot reads the rows that predict, simulate and sweep write "
                     "with -o FILE.csv or FILE.json");
  }
  const std::string text = topologies::read_input_file(path);
  return csv ? parse_csv_table(text, path) : parse_json_table(text, path);
}

}  // namespace treering::cli
