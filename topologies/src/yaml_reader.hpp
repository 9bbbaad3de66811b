// Strict reading of YAML maps and scalars with errors at the right place. Private to topologies:
// yaml-cpp headers do not leave this module.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "treering/topologies/input_error.hpp"

namespace treering::topologies::yaml {

// The 1-based location of a node (yaml-cpp marks are 0-based).
InputLocation location_of(const std::string& file, const YAML::Node& node);
InputLocation location_of(const std::string& file, const YAML::Mark& mark);

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& message);

// A YAML map whose keys are checked against a list when it is opened: the first unknown or duplicate key,
// in document order, is an error at that key.
class StrictMap {
 public:
  StrictMap(const YAML::Node& node, std::string file, std::string what, std::initializer_list<std::string_view> keys);

  bool has(std::string_view key) const;
  // The value of a key that must be present (error at the map otherwise).
  YAML::Node required(std::string_view key) const;
  // The value of an optional key, or an undefined node (test with `if (node)`).
  YAML::Node optional(std::string_view key) const;

  // Scalars, with the key's name in messages.
  std::string string(std::string_view key) const;  // required
  std::string name(std::string_view key) const;    // required, not empty
  // Integers in [minimum, maximum]; the maximum keeps hostile input from building absurd graphs.
  int integer(std::string_view key, int minimum, int maximum) const;  // required
  int integer_or(std::string_view key, int minimum, int maximum, int fallback) const;
  double number(std::string_view key, double minimum, double maximum) const;  // required, in range
  double number_or(std::string_view key, double minimum, double maximum, double fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  // Quantities: required, positive (durations: not negative) and below a plausibility bound.
  double bandwidth_Bps(std::string_view key) const;  // required, > 0
  double bandwidth_Bps_or(std::string_view key, double fallback) const;
  double bytes(std::string_view key) const;       // required, > 0
  double duration_s(std::string_view key) const;  // required, >= 0
  double duration_s_or(std::string_view key, double fallback) const;
  // A duration that may exceed the usual 1 s bound (a compilation), up to `maximum_s`.
  double long_duration_s(std::string_view key, double maximum_s, const char* maximum_text) const;
  double flops(std::string_view key) const;  // required, > 0

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& what() const { return what_; }

 private:
  void refuse_empty(std::string_view key, const YAML::Node& value) const;

  YAML::Node node_;
  std::string file_;
  std::string what_;
};

// "a map", "a list", "a scalar", "nothing": what a node is, for messages.
const char* kind_name(const YAML::Node& node);

// Scalar conversions of a single node; `name` is used in messages ("'count'").
std::string scalar_string(const std::string& file, const YAML::Node& node, std::string_view name);
int scalar_integer(const std::string& file, const YAML::Node& node, std::string_view name, int minimum,
                   int maximum = 1'000'000'000);
double scalar_number(const std::string& file, const YAML::Node& node, std::string_view name, double minimum,
                     double maximum);
// A sequence node (error otherwise).
void require_sequence(const std::string& file, const YAML::Node& node, std::string_view name);

}  // namespace treering::topologies::yaml

namespace treering::topologies {
// A command-line argument that names a file rather than a preset: it contains '/' or ends in .yaml/.yml.
bool looks_like_path(const std::string& text);
}  // namespace treering::topologies
