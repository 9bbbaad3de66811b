// An implementation profile's prefill section: read strictly, errors at the offending key.
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

TEST_CASE("a prefill section reads back its schedule, efficiency and source") {
  const ImplProfile p = load_impl_profile_text(
      kHead + "prefill: {attention_schedule: ring-causal-skip, attention_efficiency: 0.37, source: fa3-fig5}\n", "p.yaml");
  REQUIRE(p.prefill.has_value());
  CHECK(p.prefill->attention_schedule == "ring-causal-skip");
  CHECK(p.prefill->attention_efficiency == 0.37);
  CHECK(p.sources.at("prefill") == "fa3-fig5");
  CHECK(!load_impl_profile_text(kHead, "p.yaml").prefill.has_value());  // absent: the generic estimate
}

TEST_CASE("a bad prefill section is an error at its key") {
  // Line 5 is the prefill line; columns count from 1.
  CHECK(error_of(kHead + "prefill: {attention_schedule: balanced, attention_efficiency: 0.4, source: s}\n")
            .find("p.yaml:5:31: error: 'attention_schedule' must be ring-causal-skip, got 'balanced'") == 0);
  CHECK(error_of(kHead + "prefill: {attention_schedule: ring-causal-skip, attention_efficiency: 1.5, source: s}\n")
            .find("p.yaml:5:") == 0);
  CHECK(error_of(kHead + "prefill: {attention_schedule: ring-causal-skip, attention_efficiency: 0.4}\n").find("p.yaml:5:10: error:") == 0);
  CHECK(error_of(kHead + "prefill: {attention_schedul: ring-causal-skip, attention_efficiency: 0.4, source: s}\n")
            .find("unknown key 'attention_schedul' in the prefill section") != std::string::npos);
}
