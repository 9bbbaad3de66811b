// libFuzzer target: the unit parsers of units.hpp on the same text, and the promises the header makes about what
// they return: numbers (not NaN), message sizes >= 0, whole token counts >= 1 that format_token_count writes so
// that parse_token_count reads them back, and lists of 1 to 100000 values. A quantity may still overflow to
// infinity when its prefix is applied ("1e308PB/s"): the callers bound every quantity (the YAML reader's
// plausibility limits, the commands' own checks), so that is not checked here.
// Bad input must end in std::invalid_argument (or InputError); anything else is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"

using namespace treering::topologies;
using treering::fuzz::check;

namespace {

template <typename Parse>
void quantity(Parse parse, std::string_view text, const char* what) {
  try {
    const double value = parse(text);
    check(!std::isnan(value), what, text);
  } catch (const InputError&) {  // a std::invalid_argument
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = treering::fuzz::as_text(data, size);
  quantity(parse_bandwidth_Bps, text, "parse_bandwidth_Bps gives a number");
  quantity(parse_bytes, text, "parse_bytes gives a number");
  quantity(parse_duration_s, text, "parse_duration_s gives a number");
  quantity(parse_flops, text, "parse_flops gives a number");

  try {
    const double bytes = parse_message_size_bytes(text);
    check(bytes >= 0, "parse_message_size_bytes gives a size >= 0", text);
  } catch (const std::invalid_argument&) {}

  try {
    const long long tokens = parse_token_count(text);
    check(tokens >= 1, "parse_token_count gives a count >= 1", text);
    const std::string written = format_token_count(tokens);
    check(parse_token_count(written) == tokens, "parse_token_count(format_token_count(n)) == n", text);
  } catch (const std::invalid_argument&) {}

  try {
    const std::vector<double> sizes = parse_message_sizes(text);
    check(!sizes.empty() && sizes.size() <= 100000, "parse_message_sizes gives 1 to 100000 values", text);
    for (double bytes : sizes) check(bytes >= 0, "parse_message_sizes gives sizes >= 0", text);
  } catch (const std::invalid_argument&) {}

  try {
    const std::vector<long long> counts = parse_token_counts(text);
    check(!counts.empty() && counts.size() <= 100000, "parse_token_counts gives 1 to 100000 values", text);
    for (long long tokens : counts) check(tokens >= 1, "parse_token_counts gives counts >= 1", text);
  } catch (const std::invalid_argument&) {}
  return 0;
}
