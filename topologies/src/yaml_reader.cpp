#include "yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>

#include "treering/topologies/units.hpp"

namespace treering::topologies::yaml {
namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_key_message(std::string_view key, std::string_view what,
                                std::initializer_list<std::string_view> keys) {
  std::string message = "unknown key '" + std::string(key) + "' in " + std::string(what);
  std::string_view best;
  size_t best_distance = 3;  // suggest only close matches (at most 2 edits)
  for (std::string_view candidate : keys) {
    size_t distance = edit_distance(key, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (!best.empty()) return message.append(" (did you mean '").append(best).append("'?)");
  message.append(" (expected one of:");
  for (std::string_view candidate : keys) message.append(" ").append(candidate);
  return message.append(")");
}

template <typename Parser>
double quantity(const std::string& file, const YAML::Node& node, std::string_view name, std::string_view kind,
                Parser parse) {
  std::string text = scalar_string(file, node, name);
  try {
    return parse(text);
  } catch (const std::invalid_argument& error) {
    fail(file, node, "invalid " + std::string(kind) + " for '" + std::string(name) + "': " + error.what());
  }
}

// Upper bounds far above any device (NVLink 5: 0.9 TB/s per direction; a GPU: ~10 PFLOP/s), so that a
// slip of a prefix is caught and sums of bandwidths cannot overflow.
constexpr double kMaxBandwidth_Bps = 1e14;
constexpr double kMaxBytes = 1e15;
constexpr double kMaxDuration_s = 1.0;
constexpr double kMaxFlops = 1e18;

double at_most(const std::string& file, const YAML::Node& node, std::string_view name, double value, double maximum,
               const char* maximum_text) {
  if (value > maximum) {
    fail(file, node,
         "'" + std::string(name) + "' is implausibly large: '" + node.Scalar() + "' (more than " + maximum_text + ")");
  }
  return value;
}

// YAML quotes (or a !!str tag) make a string: "4" is not the number 4.
void refuse_quoted(const std::string& file, const YAML::Node& node, std::string_view name, const char* expected) {
  if (node.Tag() != "?") {
    fail(file, node,
         "expected " + std::string(expected) + " for '" + std::string(name) + "', got the string '" + node.Scalar() +
             "' (remove the quotes)");
  }
}

bool valid_utf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    }
    i += length;
  }
  return true;
}

double positive(const std::string& file, const YAML::Node& node, std::string_view name, double value) {
  if (!(value > 0)) {
    fail(file, node, "'" + std::string(name) + "' must be positive, got '" + node.Scalar() + "'");
  }
  return value;
}

}  // namespace

const char* kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Null: return "nothing";
    default: return "an undefined value";
  }
}

InputLocation location_of(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return {file, 1, 1};  // e.g. an empty document: point at its start
  return {file, mark.line + 1, mark.column + 1};
}

InputLocation location_of(const std::string& file, const YAML::Node& node) { return location_of(file, node.Mark()); }

void fail(const std::string& file, const YAML::Node& node, const std::string& message) {
  throw InputError(location_of(file, node), message);
}

StrictMap::StrictMap(const YAML::Node& node, std::string file, std::string what,
                     std::initializer_list<std::string_view> keys)
    : node_(node), file_(std::move(file)), what_(std::move(what)) {
  if (!node_.IsMap()) fail(file_, node_, "expected a map for " + what_ + ", got " + kind_name(node_));
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) fail(file_, it->first, "keys of " + what_ + " must be plain names");
    const std::string& key = it->first.Scalar();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      fail(file_, it->first, unknown_key_message(key, what_, keys));
    }
    if (!seen.insert(key).second) fail(file_, it->first, "duplicate key '" + key + "' in " + what_);
  }
}

bool StrictMap::has(std::string_view key) const { return static_cast<bool>(node_[std::string(key)]); }

// An empty value ("key:" and nothing after it) is reported at its key: yaml-cpp places the empty node at
// the next token, which may be on a later line.
void StrictMap::refuse_empty(std::string_view key, const YAML::Node& value) const {
  if (!value.IsNull()) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key) fail(file_, it->first, "'" + std::string(key) + "' in " + what_ + " has no value");
  }
}

YAML::Node StrictMap::required(std::string_view key) const {
  YAML::Node value = node_[std::string(key)];
  if (!value) fail(file_, node_, "missing required key '" + std::string(key) + "' in " + what_);
  refuse_empty(key, value);
  return value;
}

YAML::Node StrictMap::optional(std::string_view key) const {
  YAML::Node value = node_[std::string(key)];
  if (value) refuse_empty(key, value);
  return value;
}

std::string StrictMap::string(std::string_view key) const { return scalar_string(file_, required(key), key); }

std::string StrictMap::name(std::string_view key) const {
  std::string text = string(key);
  if (text.empty()) fail(file_, required(key), "'" + std::string(key) + "' in " + what_ + " must not be empty");
  return text;
}

int StrictMap::integer(std::string_view key, int minimum, int maximum) const {
  return scalar_integer(file_, required(key), key, minimum, maximum);
}

int StrictMap::integer_or(std::string_view key, int minimum, int maximum, int fallback) const {
  YAML::Node value = optional(key);
  return value ? scalar_integer(file_, value, key, minimum, maximum) : fallback;
}

double StrictMap::number(std::string_view key, double minimum, double maximum) const {
  return scalar_number(file_, required(key), key, minimum, maximum);
}

double StrictMap::number_or(std::string_view key, double minimum, double maximum, double fallback) const {
  YAML::Node value = optional(key);
  return value ? scalar_number(file_, value, key, minimum, maximum) : fallback;
}

bool StrictMap::boolean_or(std::string_view key, bool fallback) const {
  YAML::Node value = optional(key);
  if (!value) return fallback;
  std::string text = scalar_string(file_, value, key);
  refuse_quoted(file_, value, key, "true or false");
  if (text == "true") return true;
  if (text == "false") return false;
  fail(file_, value, "expected true or false for '" + std::string(key) + "', got '" + text + "'");
}

double StrictMap::bandwidth_Bps(std::string_view key) const {
  YAML::Node value = required(key);
  double bandwidth_Bps = positive(file_, value, key, quantity(file_, value, key, "bandwidth", parse_bandwidth_Bps));
  return at_most(file_, value, key, bandwidth_Bps, kMaxBandwidth_Bps, "100 TB/s");
}

double StrictMap::bandwidth_Bps_or(std::string_view key, double fallback) const {
  return has(key) ? bandwidth_Bps(key) : fallback;
}

double StrictMap::bytes(std::string_view key) const {
  YAML::Node value = required(key);
  double bytes = positive(file_, value, key, quantity(file_, value, key, "size", parse_bytes));
  return at_most(file_, value, key, bytes, kMaxBytes, "1 PB");
}

double StrictMap::duration_s(std::string_view key) const {
  YAML::Node value = required(key);
  double seconds = quantity(file_, value, key, "duration", parse_duration_s);
  if (seconds < 0) fail(file_, value, "'" + std::string(key) + "' must not be negative, got '" + value.Scalar() + "'");
  return at_most(file_, value, key, seconds, kMaxDuration_s, "1 s");
}

double StrictMap::duration_s_or(std::string_view key, double fallback) const {
  return has(key) ? duration_s(key) : fallback;
}

double StrictMap::long_duration_s(std::string_view key, double maximum_s, const char* maximum_text) const {
  YAML::Node value = required(key);
  double seconds = quantity(file_, value, key, "duration", parse_duration_s);
  if (seconds < 0) fail(file_, value, "'" + std::string(key) + "' must not be negative, got '" + value.Scalar() + "'");
  return at_most(file_, value, key, seconds, maximum_s, maximum_text);
}

double StrictMap::flops(std::string_view key) const {
  YAML::Node value = required(key);
  double flops = positive(file_, value, key, quantity(file_, value, key, "compute rate", parse_flops));
  return at_most(file_, value, key, flops, kMaxFlops, "1 EFLOP/s");
}

std::string scalar_string(const std::string& file, const YAML::Node& node, std::string_view name) {
  if (!node.IsScalar()) {
    fail(file, node, "expected a single value for '" + std::string(name) + "', got " + kind_name(node));
  }
  if (!valid_utf8(node.Scalar())) fail(file, node, "'" + std::string(name) + "' is not valid UTF-8 text");
  return node.Scalar();
}

int scalar_integer(const std::string& file, const YAML::Node& node, std::string_view name, int minimum, int maximum) {
  std::string text = scalar_string(file, node, name);
  refuse_quoted(file, node, name, "an integer");
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && (value > 1'000'000'000 || value < -1'000'000'000))) {
    fail(file, node, "'" + std::string(name) + "' is out of range: " + text);
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail(file, node, "expected an integer for '" + std::string(name) + "', got '" + text + "'");
  }
  if (value < minimum) {
    fail(file, node, "'" + std::string(name) + "' must be at least " + std::to_string(minimum) + ", got " + text);
  }
  if (value > maximum) {
    fail(file, node, "'" + std::string(name) + "' must be at most " + std::to_string(maximum) + ", got " + text);
  }
  return static_cast<int>(value);
}

double scalar_number(const std::string& file, const YAML::Node& node, std::string_view name, double minimum,
                     double maximum) {
  std::string text = scalar_string(file, node, name);
  refuse_quoted(file, node, name, "a number");
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    fail(file, node, "expected a number for '" + std::string(name) + "', got '" + text + "'");
  }
  if (value < minimum || value > maximum) {
    char range[96];
    std::snprintf(range, sizeof range, "[%g, %g]", minimum, maximum);
    fail(file, node, "'" + std::string(name) + "' must be in " + range + ", got " + text);
  }
  return value;
}

void require_sequence(const std::string& file, const YAML::Node& node, std::string_view name) {
  if (!node.IsSequence()) fail(file, node, "expected a list for '" + std::string(name) + "', got " + kind_name(node));
}

}  // namespace treering::topologies::yaml
