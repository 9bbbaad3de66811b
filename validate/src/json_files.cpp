#include "json_files.hpp"

#include <fstream>

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

std::optional<nlohmann::json> json_object_in(const std::string& path) {
  topologies::check_input_file(path);
  std::ifstream in(path);
  in >> std::ws;
  if (in.peek() != '{') return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace treering::validate::detail
