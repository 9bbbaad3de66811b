// Reading treering-realrun's JSON files (bench, decode, step): one reader and one sniffer for every kind, so
// that each kind's code says only what it looks for. Private to validate.
#pragma once

#include <istream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace treering::validate::detail {

// The text of `in` (the file `path`) as JSON. Throws topologies::InputError "PATH: not valid JSON: ..." (a
// syntax error, or a number beyond a double's range).
nlohmann::json parse_json(std::istream& in, const std::string& path);

// The file as JSON (topologies::check_input_file first: no devices, pipes or huge files).
nlohmann::json read_json_file(const std::string& path);

// The file as JSON when it holds a JSON object (its first non-blank character is '{' and it parses), else
// nothing: what tells treering-realrun's files from nccl-tests logs and CSVs.
std::optional<nlohmann::json> json_object_in(const std::string& path);
// The same for a JSON object or array (first non-blank character '{' or '[').
std::optional<nlohmann::json> json_value_in(const std::string& path);

// The member `key` of `object` when it is a string, else "" (a sniffer's question that must never throw:
// nlohmann's value(key, "") throws type_error when the member holds a number).
std::string string_member(const nlohmann::json& object, const char* key);

// A whole number in [minimum, maximum], checked as a double before the conversion: nlohmann's get<int>() of
// 1e10 is undefined behaviour (a float converted out of range). Not a number: json::type_error, as for the
// other fields; out of range or fractional: InputError "PATH: 'KEY' must be a whole number >= MINIMUM, got ...".
long long whole_number(const nlohmann::json& value, double minimum, double maximum, const std::string& path,
                       const char* key);

// A setting given as a number or, as `vllm bench serve --metadata KEY=VALUE` writes it, a string of one ("2"); then
// whole_number's checks. A string that is no number: InputError "PATH: 'KEY' must be a whole number, got "2x"".
long long setting_number(const nlohmann::json& value, double minimum, double maximum, const std::string& path,
                         const char* key);

}  // namespace treering::validate::detail
