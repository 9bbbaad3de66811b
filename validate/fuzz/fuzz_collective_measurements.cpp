// libFuzzer target: read_collective_measurements (measurements.hpp) on a file that is an nccl-tests log, a CSV or a
// treering-realrun bench JSON (told apart by its content). The reader takes only a path, so each input is written to
// a scratch file of this process (fuzz_support.hpp) first.
// Bad input must end in InputError (or std::invalid_argument); anything else is a finding. What a successful read
// returns must be usable as the header promises: sizes >= 0, positive finite times, at least 2 ranks.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/measurements.hpp"

using treering::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static treering::fuzz::ScratchFile file("measurements");
  const std::string& path = file.write(data, size);
  try {
    const auto measured = treering::validate::read_collective_measurements(path);
    check(!measured.empty(), "a successful read has measurements");
    for (const auto& m : measured) {
      check(std::isfinite(m.bytes) && m.bytes >= 0, "a measurement's size is finite and >= 0");
      check(std::isfinite(m.time_s) && m.time_s > 0, "a measurement's time is finite and positive");
      check(m.ranks >= 2, "a collective measurement has at least 2 ranks");
    }
  } catch (const treering::topologies::InputError& error) {
    check(!error.message().empty(), "an InputError says what is wrong");
  } catch (const std::invalid_argument&) {}
  return 0;
}
