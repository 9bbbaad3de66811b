// Engine measurements as tables (engine_runs.hpp): LMDeploy's profile_generation CSV and treering's table of
// published engine measurements. Private to validate (engine_runs.cpp reads through it).
//
// LMDeploy's `python benchmark/profile_generation.py MODEL --tp N --csv F` (lmdeploy v0.1-v0.6) writes a row per
// (batch, prompt_tokens, completion_tokens) of its sweep: throughput, memory, the first token's latency and the
// 50/75/95/99th percentiles of every later token's latency ("50%(s)" ...), but not the model nor the TP: columns
// "model" and "tp" must be added. Each row is a run whose quantity is the median token latency: a decode step,
// the one at the middle context. LMDeploy's own benchmark pages print the same table with a tp column and
// "output_tokens" for completion_tokens; both spellings are read.
//
// A table of published engine measurements (validate/data/engine-runs) is treering's own CSV:
//   engine,version,model,tp,batch,input_len,output_len,quantity,measured_s[,prompts]
// quantity "latency" (a batch generated end to end, as vllm bench latency times it) or "step" (a median decode
// step); prompts, optional, "distinct" (the default: each sequence its own prompt, or sampled) or "identical" (one
// prompt replicated over the batch and decoded greedily, so an MoE model's sequences route alike); '#' lines are
// comments (the source, the GPU, how the measurement was made).
#pragma once

#include <string>
#include <vector>

#include "treering/validate/engine_runs.hpp"

namespace treering::validate::detail {

// True when the first line that is not a comment is LMDeploy's profile_generation header (batch, prompt_tokens and
// 50%(s) among its fields) or treering's engine table header.
bool is_engine_table_file(const std::string& path);
// Its runs, the workload not yet resolved. topologies::InputError "PATH:LINE: error: ..." on a bad line, a
// missing model or tp column, a file of no row.
std::vector<EngineRun> read_engine_table_runs(const std::string& path);

}  // namespace treering::validate::detail
