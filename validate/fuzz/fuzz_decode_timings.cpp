// libFuzzer target: a timings CSV (decode_timings.hpp) through is_decode_timings_csv and read_decode_timings_csv.
// The readers take only a path, so each input is written to a scratch file of this process first. Bad input must
// end in InputError (or std::invalid_argument); is_decode_timings_csv must not throw at all. A successful read
// returns rows that satisfy the reader's own checks.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/decode_timings.hpp"

using treering::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static treering::fuzz::ScratchFile file("timings");
  const std::string& path = file.write(data, size);
  treering::validate::is_decode_timings_csv(path);  // a yes/no question: an exception here is a finding
  try {
    const auto rows = treering::validate::read_decode_timings_csv(path);
    check(!rows.empty(), "a successful read has timings");
    for (const auto& t : rows) {
      check(!t.cluster.empty() && !t.workload.empty() && !t.algorithm.empty(),
            "a timing names its cluster, workload, algorithm");
      check(t.gpus >= 1 && t.seq_len >= 1 && t.batch >= 0, "a timing's GPUs and length are >= 1, its batch >= 0");
      check(t.tokens && *t.tokens >= 1, "a CSV timing generates at least one token");
      check(std::isfinite(t.measured_s) && t.measured_s > 0, "a timing's measured time is finite and positive");
    }
  } catch (const treering::topologies::InputError& error) {
    check(!error.message().empty(), "an InputError says what is wrong");
  } catch (const std::invalid_argument&) {}
  return 0;
}
