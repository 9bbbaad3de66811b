// A profile's engine_step section (impl_profile.hpp): a serving engine's host work per decode step, read with its
// source, written back, and refused at the right place when wrong.
#include <doctest/doctest.h>

#include <string>

#include "treering/topologies/impl_profile.hpp"

using namespace treering::topologies;

namespace {

const std::string kHead =
    "name: x\n"
    "description: d\n"
    "implementation: i\n"
    "uncertainty: {compute: 0.1, communication: 0.2, source: s}\n";

std::string error_of(const std::string& text) {
  try {
    load_impl_profile_text(text, "p.yaml");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("an engine_step section reads back its fixed and per-sequence work and its source") {
  const ImplProfile p =
      load_impl_profile_text(kHead + "engine_step: {fixed: 0.8ms, per_sequence: 12us, source: profiled}\n", "p.yaml");
  REQUIRE(p.engine_step.has_value());
  CHECK(p.engine_step->fixed_s == doctest::Approx(0.8e-3).scale(1e-12));
  CHECK(p.engine_step->per_sequence_s == doctest::Approx(12e-6).scale(1e-12));
  CHECK(p.sources.at("engine_step") == "profiled");
  // 0.8 ms + 32 x 12 us = 1.184 ms a step at batch 32.
  CHECK(p.engine_step->step_s(32) == doctest::Approx(1.184e-3).scale(1e-12));
  const ImplProfile back = load_impl_profile_text(impl_profile_yaml(p), "back.yaml");
  REQUIRE(back.engine_step.has_value());
  CHECK(back.engine_step->fixed_s == doctest::Approx(0.8e-3).scale(1e-12));
  CHECK(back.engine_step->per_sequence_s == doctest::Approx(12e-6).scale(1e-12));
  CHECK(back.engine_step->source == "profiled");
  CHECK_FALSE(load_impl_profile_text(kHead, "p.yaml").engine_step.has_value());  // absent: no engine
}

TEST_CASE("a bad engine_step section is an error at its key") {
  CHECK(error_of(kHead + "engine_step: {fixed: 0.8ms, per_sequence: 12us}\n").find("p.yaml:5:") == 0);  // no source
  CHECK(error_of(kHead + "engine_step: {fixed: -1ms, source: s}\n").find("p.yaml:5:") == 0);
  CHECK(
      error_of(kHead + "engine_step: {fixd: 1ms, source: s}\n").find("unknown key 'fixd' in the engine_step section") !=
      std::string::npos);
}
