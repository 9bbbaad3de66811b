// SGLang's `python -m sglang.bench_one_batch --result-filename F` (python/sglang/bench_one_batch.py): F gets a JSON
// line per (batch_size, input_len, output_len) of the sweep with run_name, prefill_latency, median_decode_latency
// (the median of the output_len - 1 decode steps, each synchronised and timed alone), total_latency and throughputs,
// but neither the model nor the TP it ran with: those must be added to each line ("model_path", "tp_size"). Each
// line is a run whose quantity is the median decode step. Private to validate (engine_runs.cpp reads through it).
#pragma once

#include <string>
#include <vector>

#include "treering/validate/engine_runs.hpp"

namespace treering::validate::detail {

// True when every non-blank line of `path` is one of bench_one_batch's results.
bool is_one_batch_file(const std::string& path);
// Its runs, the workload not yet resolved. topologies::InputError "PATH:LINE: error: ..." on a bad line.
std::vector<EngineRun> read_one_batch_runs(const std::string& path);

}  // namespace treering::validate::detail
