// libFuzzer target: a serving engine's benchmark file (vLLM latency, serve, .pytorch.json; trtllm-bench reports; SGLang
// one-batch lines; LMDeploy profile_generation CSVs and treering's engine tables)
// through is_engine_benchmark_file and read_engine_runs (engine_runs.hpp). The readers take only a path, so each
// input is written to a scratch file of this process first.
// Bad input must end in InputError (or std::invalid_argument); is_engine_benchmark_file must not throw at all. What a
// successful read returns must satisfy the reader's own checks: settings >= 1, a positive time, a known workload.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/engine_runs.hpp"

using treering::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static treering::fuzz::ScratchFile file("engine-runs");
  const std::string& path = file.write(data, size);
  treering::validate::is_engine_benchmark_file(path);  // a yes/no question: an exception here is a finding
  try {
    const auto runs = treering::validate::read_engine_runs(path);
    check(!runs.empty(), "a successful read has runs");
    for (const treering::validate::EngineRun& run : runs) {
      check(run.batch >= 1 && run.input_len >= 1 && run.output_len >= 1 && run.tp >= 1, "a run's settings are >= 1");
      check(std::isfinite(run.measured_s) && run.measured_s > 0, "a run's measured time is finite and positive");
      check(!run.workload.empty(), "a run names a workload preset");
    }
  } catch (const treering::topologies::InputError& error) {
    check(!error.message().empty(), "an InputError says what is wrong");
  } catch (const std::invalid_argument&) {}
  return 0;
}
