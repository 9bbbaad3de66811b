#include "treering/analysis/csv.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace treering::analysis {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char ch : text) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + '"';
}

std::string csv_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);  // shortest round-trip form
  if (error != std::errc{}) throw std::logic_error("csv_number: to_chars failed");
  return std::string(text, end);
}

CsvRecord& CsvRecord::text(std::string_view value) {
  append(csv_field(value));
  return *this;
}

CsvRecord& CsvRecord::number(double value) {
  append(csv_number(value));
  return *this;
}

CsvRecord& CsvRecord::integer(long long value) {
  append(std::to_string(value));
  return *this;
}

CsvRecord& CsvRecord::empty() {
  append("");
  return *this;
}

void CsvRecord::append(const std::string& field) {
  if (!first_) fields_ += ',';
  fields_ += field;
  first_ = false;
}

}  // namespace treering::analysis
