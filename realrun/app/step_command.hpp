// treering-realrun step: one whole decode step of a Llama-architecture model on the GPU (step_run.hpp), timed as
// a CUDA graph, with the parts predict --scope step names, for every workload x batch x context x tp asked; JSON
// with provenance. A point that does not fit the GPU is skipped with the figures; tp > 1 runs loopback ranks and
// checks each rank's collective bytes against the model's.
#pragma once

#include <string>
#include <vector>

#include "mpi_transport.hpp"
#include "treering/model/realrun_plans.hpp"

namespace treering::realrun::app {

// What a step asked of another backend is told.
inline constexpr const char* kStepNeedsCuda = "step runs on the cuda backend only (a step's GEMMs need a GPU)";

struct StepOptions {
  model::RealrunBackend backend = model::RealrunBackend::cuda;  // cuda only (cpu is refused)
  std::vector<std::string> workloads{"llama3.1-8b"};  // presets, workload YAML files or Hugging Face config.json files
  std::string seq_len = "4k";
  std::vector<int> batch{1};
  std::vector<int> tp{1};
  int cp = 1;
  int iterations = 20;
  int warmup = 3;
  unsigned long long seed = 7;
  std::string output;
  std::vector<std::string> argv;
};

// Returns the exit code: 0; 1 when a loopback's bytes differ from the model's, a step's output is not finite or
// the device fails; 2 for bad input.
int run_step(const StepOptions& options, MpiTransport& transport);

}  // namespace treering::realrun::app
