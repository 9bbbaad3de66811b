// Test helper: vLLM latency runs (latency-b8.json's model and lengths, then changed) whose measured times are what
// a known profile predicts, for the engine fit's tests to recover that profile from.
#pragma once

#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/validate/engine_fit.hpp"
#include "treering/validate/engine_runs.hpp"

namespace treering::testing {

// One run for every TP of `tps` and batch of `batches` (TP outer), the n-th run's input length input_lengths[n %
// size] (empty: latency-b8.json's 32), measured as `truth` predicts it on `spec`.
inline std::vector<validate::EngineRun> engine_runs_made_with(const topologies::ClusterSpec& spec,
                                                              const topologies::ImplProfile& truth,
                                                              const std::vector<int>& tps,
                                                              const std::vector<int>& batches,
                                                              const std::vector<int>& input_lengths = {}) {
  std::vector<validate::EngineRun> runs;
  for (int tp : tps) {
    for (int batch : batches) {
      validate::EngineRun run =
          validate::read_engine_run(std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/vllm/latency-b8.json");
      run.batch = batch, run.tp = tp;
      if (!input_lengths.empty()) run.input_len = input_lengths[runs.size() % input_lengths.size()];
      run.measured_s = validate::predict_engine_run(spec, truth, run).predicted_s;
      runs.push_back(run);
    }
  }
  return runs;
}

}  // namespace treering::testing
