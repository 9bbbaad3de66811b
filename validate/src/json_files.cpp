#include "json_files.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string_view>

#include "treering/topologies/input_error.hpp"

namespace treering::validate::detail {

nlohmann::json parse_json(std::istream& in, const std::string& path) {
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {  // parse_error, or out_of_range: a number beyond a double's range
    throw topologies::InputError({path, 0, 0}, std::string("not valid JSON: ") + error.what());
  }
}

nlohmann::json read_json_file(const std::string& path) {
  topologies::check_input_file(path);
  std::ifstream in(path);
  if (!in) throw topologies::InputError({path, 0, 0}, "cannot read the file");
  return parse_json(in, path);
}

namespace {

// The file as JSON when its first non-blank character is one of `openers` and it parses, else nothing.
std::optional<nlohmann::json> json_starting_with(const std::string& path, std::string_view openers) {
  topologies::check_input_file(path);
  std::ifstream in(path);
  in >> std::ws;
  if (openers.find(static_cast<char>(in.peek())) == std::string_view::npos) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<nlohmann::json> json_object_in(const std::string& path) { return json_starting_with(path, "{"); }

std::optional<nlohmann::json> json_value_in(const std::string& path) { return json_starting_with(path, "{["); }

std::string string_member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto member = object.find(key);
  return member != object.end() && member->is_string() ? member->get<std::string>() : "";
}

long long whole_number(const nlohmann::json& value, double minimum, double maximum, const std::string& path,
                       const char* key) {
  const double number = value.get<double>();
  if (!(number >= minimum && number <= maximum) || number != std::floor(number)) {
    throw topologies::InputError({path, 0, 0}, std::string("'") + key + "' must be a whole number >= " +
                                                   std::to_string(static_cast<long long>(minimum)) + ", got " +
                                                   value.dump());
  }
  return static_cast<long long>(number);
}

// A setting given as a number or, as `--metadata KEY=VALUE` writes it, a string of one ("2").
long long setting_number(const nlohmann::json& value, double minimum, double maximum, const std::string& path,
                         const char* key) {
  if (!value.is_string()) return whole_number(value, minimum, maximum, path, key);
  const std::string text = value.get<std::string>();
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    throw topologies::InputError({path, 0, 0},
                                 std::string("'") + key + "' must be a whole number, got " + value.dump());
  return whole_number(nlohmann::json(number), minimum, maximum, path, key);
}

}  // namespace treering::validate::detail
