// Message sizes and token counts for the command line, single values, lists and ranges (units.hpp).
#include <charconv>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::topologies {
namespace {

constexpr size_t kMaxValues = 100000;

// A number followed by an optional one-letter multiplier from `letters` (factor base^(position + 1)).
double scaled_number(std::string_view text, std::string_view letters, double base, const char* what) {
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data() || !std::isfinite(number)) {
    throw InputError("'" + std::string(text) + "' is not a " + what);
  }
  std::string_view rest = text.substr(static_cast<size_t>(end - text.data()));
  if (rest.empty()) return number;
  const size_t position = rest.size() == 1 ? letters.find(rest.front()) : std::string_view::npos;
  if (position == std::string_view::npos) {
    throw InputError("'" + std::string(text) + "' is not a " + what);
  }
  return number * std::pow(base, static_cast<double>(position + 1));
}

template <typename Value>
std::vector<Value> parse_list(std::string_view text, const std::function<Value(std::string_view)>& parse_one) {
  std::vector<Value> values;
  while (true) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    const size_t first_colon = item.find(':');
    if (first_colon == std::string_view::npos) {
      values.push_back(parse_one(item));
    } else {
      const size_t second_colon = item.find(':', first_colon + 1);
      const Value first = parse_one(item.substr(0, first_colon));
      const Value last = parse_one(item.substr(first_colon + 1, second_colon - first_colon - 1));
      std::string_view step = second_colon == std::string_view::npos ? "x2" : item.substr(second_colon + 1);
      if (!(first <= last)) throw InputError("range '" + std::string(item) + "' must not descend");
      const bool multiply = !step.empty() && step.front() == 'x';
      if (step.empty() || (step.front() != 'x' && step.front() != '+')) {
        throw InputError("range step '" + std::string(step) + "' must be xFACTOR or +STEP");
      }
      const double amount =
          multiply ? scaled_number(step.substr(1), "", 1, "factor") : static_cast<double>(parse_one(step.substr(1)));
      if (multiply ? !(amount > 1) : !(amount > 0)) {
        throw InputError("range step '" + std::string(step) + "' must grow the value");
      }
      for (double value = static_cast<double>(first); value <= static_cast<double>(last) * (1 + 1e-12);
           value = multiply ? value * amount : value + amount) {
        // Sizes stay doubles: llround of one beyond 2^63 (8:16000000001G) is unspecified, in practice negative.
        if constexpr (std::is_integral_v<Value>) {
          values.push_back(static_cast<Value>(std::llround(value)));
        } else {
          values.push_back(std::round(value));
        }
        if (values.size() > kMaxValues) break;
      }
    }
    if (values.size() > kMaxValues) throw InputError("more than 100000 values");
    if (comma == std::string_view::npos) return values;
    text.remove_prefix(comma + 1);
  }
}

// "128Ki" = 128 x 1024: IEC prefixes are powers of 1024, for tokens as for bytes.
double binary_scaled_number(std::string_view text, const char* what) {
  for (const auto& [symbol, factor] :
       {std::pair<std::string_view, double>{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}}) {
    if (text.size() > symbol.size() && text.substr(text.size() - symbol.size()) == symbol) {
      return scaled_number(text.substr(0, text.size() - symbol.size()), "", 1, what) * factor;
    }
  }
  return scaled_number(text, "kMG", 1000, what);
}

constexpr double kMostTokens = 1e15;
constexpr double kMostMessageBytes = 1125899906842624.0;  // 1 PiB: beyond any memory a collective could hold

}  // namespace

double parse_message_size_bytes(std::string_view text) {
  double bytes = 0;
  try {
    bytes = scaled_number(text, "KMGTP", 1024, "message size");
  } catch (const std::invalid_argument&) {
    bytes = parse_bytes(text);  // "8KB", "8KiB": its own message when that fails too
  }
  if (bytes < 0) throw InputError("a message size must not be negative: '" + std::string(text) + "'");
  return bytes;
}

long long parse_token_count(std::string_view text) {
  const double tokens = binary_scaled_number(text, "token count (e.g. 80k, 5.12M or 128Ki)");
  if (tokens > kMostTokens) {
    throw InputError("'" + std::string(text) + "' tokens is more than treering takes (1e15)");
  }
  if (tokens < 1 || std::fabs(tokens - std::round(tokens)) > 1e-6) {
    throw InputError("'" + std::string(text) + "' is not a whole number of tokens >= 1");
  }
  return std::llround(tokens);
}

std::vector<double> parse_message_sizes(std::string_view text) {
  return parse_list<double>(text, [](std::string_view item) {
    const double bytes = parse_message_size_bytes(item);
    if (bytes > kMostMessageBytes) {
      throw InputError("a message of '" + std::string(item) + "' is more than treering takes (1 PiB)");
    }
    if (std::fabs(bytes - std::round(bytes)) > 1e-6) {
      throw InputError("'" + std::string(item) + "' is not a whole number of bytes");
    }
    return std::round(bytes);
  });
}

std::vector<long long> parse_token_counts(std::string_view text) {
  return parse_list<long long>(text, parse_token_count);
}

}  // namespace treering::topologies
