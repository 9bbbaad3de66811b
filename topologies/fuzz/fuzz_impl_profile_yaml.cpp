// libFuzzer target: an implementation profile (YAML) through load_impl_profile_text, then written back with
// impl_profile_yaml and read again. Bad input must end in InputError (or std::invalid_argument); a profile that
// loads must write YAML that loads to the same name, overheads and uncertainty.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "treering/topologies/impl_profile.hpp"

using namespace treering::topologies;
using treering::fuzz::check;

namespace {

bool close(double a, double b) { return std::abs(a - b) <= 1e-8 * std::max(std::abs(a), std::abs(b)) + 1e-15; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(treering::fuzz::as_text(data, size));
  ImplProfile profile;
  try {
    profile = load_impl_profile_text(text, "fuzz.yaml");
  } catch (const InputError& error) {
    check(!error.message().empty(), "an InputError says what is wrong");
    return 0;
  } catch (const std::invalid_argument&) {
    return 0;
  }
  check(!profile.name.empty(), "a loaded profile has a name");
  check(profile.uncertainty.compute >= 0 && profile.uncertainty.communication >= 0, "uncertainties are >= 0");
  check(profile.collective_call_s >= 0 && profile.host_round_trip_s >= 0 && profile.first_call_s >= 0,
        "overheads are >= 0");
  ImplProfile back;
  try {
    back = load_impl_profile_text(impl_profile_yaml(profile), "written.yaml");
  } catch (const std::exception& error) {
    check(false, "a loaded profile writes YAML that loads", error.what());
  }
  check(back.name == profile.name, "the written profile keeps its name");
  check(close(back.host_round_trip_s, profile.host_round_trip_s) && close(back.first_call_s, profile.first_call_s),
        "the written profile keeps its overheads");
  check(back.uncertainty.compute == profile.uncertainty.compute, "the written profile keeps its uncertainty");
  check(back.per_layer.size() == profile.per_layer.size(), "the written profile keeps its extra work");
  check(back.prefill.has_value() == profile.prefill.has_value() &&
            (!profile.prefill || back.prefill->attention_efficiency == profile.prefill->attention_efficiency),
        "the written profile keeps its prefill");
  check(back.engine_step.has_value() == profile.engine_step.has_value(), "the written profile keeps its engine_step");
  if (profile.engine_step) {
    const EngineStep& was = *profile.engine_step;
    const EngineStep& now = *back.engine_step;
    check(close(now.per_collective_s, was.per_collective_s) && close(now.per_layer_s, was.per_layer_s) &&
              now.paged_attention.has_value() == was.paged_attention.has_value() &&
              (!was.paged_attention ||
               (now.paged_attention->v1_bandwidth_efficiency == was.paged_attention->v1_bandwidth_efficiency &&
                now.paged_attention->max_seq_len_to_capture == was.paged_attention->max_seq_len_to_capture)),
          "the written profile keeps its engine_step's collectives, layers and PagedAttention");
  }
  return 0;
}
