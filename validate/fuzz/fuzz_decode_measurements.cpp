// libFuzzer target: treering-realrun decode JSON through is_decode_file and read_decode_measurements (decodes.hpp).
// The readers take only a path, so each input is written to a scratch file of this process first.
// Bad input must end in InputError (or std::invalid_argument); is_decode_file must not throw at all. What a
// successful read returns must satisfy the reader's own checks: a known backend, positive latency, length, ranks.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/decodes.hpp"

using treering::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static treering::fuzz::ScratchFile file("decodes");
  const std::string& path = file.write(data, size);
  treering::validate::is_decode_file(path);  // documented as a yes/no question: an exception here is a finding
  try {
    const auto measured = treering::validate::read_decode_measurements(path);
    check(!measured.empty(), "a successful read has measurements");
    for (const auto& m : measured) {
      check(m.backend == "cpu" || m.backend == "cuda", "a decode's backend is cpu or cuda");
      check(std::isfinite(m.latency_s) && m.latency_s > 0, "a decode's latency is finite and positive");
      check(m.seq_len >= 1 && m.ranks >= 1 && m.batch >= 1, "a decode's length, ranks and batch are >= 1");
    }
  } catch (const treering::topologies::InputError& error) {
    check(!error.message().empty(), "an InputError says what is wrong");
  } catch (const std::invalid_argument&) {}
  return 0;
}
