// Comma-separated fields (csv_fields.hpp).
#include "csv_fields.hpp"

#include <cmath>
#include <sstream>

namespace treering::validate::detail {

using topologies::InputError;

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(trimmed(field));
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

long long whole(const std::string& text, long long smallest, long long largest, const topologies::InputLocation& where,
                const char* what) {
  try {
    size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (used == text.size() && value >= smallest && value <= largest) return value;
  } catch (const std::exception&) {}
  throw InputError(where, std::string(what) + " must be a whole number from " + std::to_string(smallest) + " to " +
                              std::to_string(largest) + ", got '" + text + "'");
}

double seconds(const std::string& text, const topologies::InputLocation& where, const char* what) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() && std::isfinite(value) && value > 0) return value;
  } catch (const std::exception&) {}
  throw InputError(where, std::string(what) + " must be a positive number of seconds, got '" + text + "'");
}

}  // namespace treering::validate::detail
