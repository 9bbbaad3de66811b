// libFuzzer target: treering-realrun `bench attention` JSON through is_attention_file and
// read_attention_measurements (compute_fit.hpp). The readers take only a path, so each input is written to a
// scratch file of this process first.
// Bad input must end in InputError (or std::invalid_argument); is_attention_file must not throw at all.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/compute_fit.hpp"

using treering::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static treering::fuzz::ScratchFile file("attention");
  const std::string& path = file.write(data, size);
  treering::validate::is_attention_file(path);  // a yes/no question: an exception here is a finding
  try {
    const auto measured = treering::validate::read_attention_measurements(path);
    check(!measured.empty(), "a successful read has measurements");
  } catch (const treering::topologies::InputError& error) {
    check(!error.message().empty(), "an InputError says what is wrong");
  } catch (const std::invalid_argument&) {}
  return 0;
}
