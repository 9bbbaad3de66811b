#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace treering::topologies {
namespace {

struct Prefix {
  std::string_view symbol;
  double factor;
};

// Longest symbols first so that "Gi" wins over "G".
constexpr std::array<Prefix, 11> kPrefixes{{{"Ki", 1024.0},
                                            {"Mi", 1048576.0},
                                            {"Gi", 1073741824.0},
                                            {"Ti", 1099511627776.0},
                                            {"Pi", 1125899906842624.0},
                                            {"k", 1e3},
                                            {"M", 1e6},
                                            {"G", 1e9},
                                            {"T", 1e12},
                                            {"P", 1e15},
                                            {"E", 1e18}}};

struct SplitQuantity {
  double number;
  std::string_view unit;
};

SplitQuantity split_number_and_unit(std::string_view text, std::string_view kind_example) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double number = 0.0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) {
    throw InputError("'" + std::string(text) + "' is not a quantity (expected a number and a unit, e.g. " +
                     std::string(kind_example) + ")");
  }
  if (!std::isfinite(number)) {
    throw InputError("'" + std::string(text) + "' is not a finite number");
  }
  std::string_view unit = text.substr(static_cast<size_t>(end - text.data()));
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (unit.empty()) {
    throw InputError("'" + std::string(text) + "' has no unit (expected e.g. " + std::string(kind_example) + ")");
  }
  return {number, unit};
}

// Splits "GB/s" into prefix factor 1e9 and base "B/s". No prefix gives factor 1.
std::pair<double, std::string_view> split_prefix(std::string_view unit, std::string_view allowed_bases_first) {
  for (const Prefix& prefix : kPrefixes) {
    if (unit.size() > prefix.symbol.size() && unit.substr(0, prefix.symbol.size()) == prefix.symbol) {
      std::string_view rest = unit.substr(prefix.symbol.size());
      // "Pi" followed by nothing valid must not hide a bare base; check the rest starts like a base.
      if (!rest.empty() && allowed_bases_first.find(rest.front()) != std::string_view::npos) {
        return {prefix.factor, rest};
      }
    }
  }
  return {1.0, unit};
}

[[noreturn]] void throw_bad_unit(std::string_view text, std::string_view unit, std::string_view kind,
                                 std::string_view expected) {
  throw InputError("unknown " + std::string(kind) + " unit '" + std::string(unit) + "' in '" + std::string(text) +
                   "' (expected " + std::string(expected) + ")");
}

}  // namespace

double parse_bandwidth_Bps(std::string_view text) {
  auto [number, unit] = split_number_and_unit(text, "400Gb/s or 900GB/s");
  auto [factor, base] = split_prefix(unit, "Bb");
  double bits_per_unit = 0.0;
  if (base == "B/s" || base == "Bps") {
    bits_per_unit = 8.0;
  } else if (base == "b/s" || base == "bps") {
    bits_per_unit = 1.0;
  } else {
    throw_bad_unit(text, unit, "bandwidth", "B/s or b/s with an optional prefix k M G T P Ki Mi Gi Ti, e.g. 400Gb/s");
  }
  return number * factor * bits_per_unit / 8.0;
}

double parse_bytes(std::string_view text) {
  auto [number, unit] = split_number_and_unit(text, "80GB or 80GiB");
  auto [factor, base] = split_prefix(unit, "B");
  if (base != "B") throw_bad_unit(text, unit, "size", "B with an optional prefix k M G T P Ki Mi Gi Ti, e.g. 80GiB");
  return number * factor;
}

double parse_duration_s(std::string_view text) {
  auto [number, unit] = split_number_and_unit(text, "1.5us");
  if (unit == "s") return number;
  if (unit == "ms") return number * 1e-3;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return number * 1e-6;
  if (unit == "ns") return number * 1e-9;
  throw_bad_unit(text, unit, "duration", "s, ms, us or ns, e.g. 1.5us");
}

double parse_flops(std::string_view text) {
  auto [number, unit] = split_number_and_unit(text, "989TFLOPS");
  auto [factor, base] = split_prefix(unit, "F");
  if (base != "FLOPS" && base != "FLOP/s") {
    throw_bad_unit(text, unit, "compute rate", "FLOPS or FLOP/s with an optional prefix k M G T P E, e.g. 989TFLOPS");
  }
  return number * factor;
}

namespace {

// A unit's multiple: factor 1e9 with prefix "G" reads as "G" + the unit.
struct PrefixStep {
  double factor;
  const char* prefix;
};

// The one place where a quantity is scaled to a prefix: the largest step under which the value, rounded to 4
// significant digits, is at least 1 (rounding first, so that 999999 B reads "1 MB" rather than "1000 kB"); values
// under every step take the smallest. Zero and non-finite values keep factor 1 and no prefix. The unit follows
// after a space; a bare number takes its prefix directly ("80k").
// Worked example: 4.5e11 with "B/s" -> 4.5e11 / 1e9 = 450 -> "450 GB/s".
std::string format_scaled(double value, const std::vector<PrefixStep>& steps_descending, std::string_view unit) {
  const std::string separator = unit.empty() ? "" : " ";
  char buffer[64];
  if (!std::isfinite(value) || value == 0.0) {
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer + separator + std::string(unit);
  }
  for (size_t i = 0; i < steps_descending.size(); ++i) {
    const PrefixStep& step = steps_descending[i];
    std::snprintf(buffer, sizeof buffer, "%.4g", std::fabs(value) / step.factor);
    if (std::strtod(buffer, nullptr) >= 1.0 || i + 1 == steps_descending.size()) {
      std::string text = value < 0 ? "-" : "";
      text.append(buffer).append(separator).append(step.prefix).append(unit);
      return text;
    }
  }
  return {};  // not reached: the last step always answers
}

}  // namespace

std::string format_si(double value, std::string_view unit) {
  static const std::vector<PrefixStep> kSteps{{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"},
                                              {1e6, "M"},  {1e3, "k"},  {1.0, ""}};
  return format_scaled(value, kSteps, unit);
}

std::string format_bandwidth(double bandwidth_Bps) { return format_si(bandwidth_Bps, "B/s"); }
std::string format_bandwidth_bits(double bandwidth_Bps) { return format_si(bandwidth_Bps * 8.0, "b/s"); }
std::string format_bytes(double bytes) { return format_si(bytes, "B"); }
std::string format_flops(double flops) { return format_si(flops, "FLOP/s"); }

std::string format_token_count(long long tokens) {
  char buffer[32];
  for (const auto& [unit, suffix] : {std::pair<long long, const char*>{1000000000, "G"}, {1000000, "M"}, {1000, "k"}}) {
    // Exact with at most two decimals (5,120,000 = 5.12M), else the next smaller unit (1,001 stays 1001).
    if (tokens >= unit && tokens % (unit / 100) == 0) {
      std::snprintf(buffer, sizeof buffer, "%.4g%s", static_cast<double>(tokens) / static_cast<double>(unit), suffix);
      // Only when the 4 significant digits hold it all: 123,450,000 is not "123.5M" (parse_token_count reads this).
      if (std::string(buffer).find('e') == std::string::npos &&
          std::llround(std::strtod(buffer, nullptr) * static_cast<double>(unit)) == tokens) {
        return buffer;
      }
    }
  }
  return std::to_string(tokens);
}

std::string format_duration(double seconds) {
  // Seconds at most: 2000 s stays "2000 s", never "2 ks".
  static const std::vector<PrefixStep> kSteps{{1.0, ""}, {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
  return format_scaled(seconds, kSteps, "s");
}

std::string format_list(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace treering::topologies
