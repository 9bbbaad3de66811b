// Runs a benchmark's own sweep shows to be mismeasured: a run that took longer than a larger run of the same setup.
//
// Of two latency runs of one engine, model and TP, the one with at least the other's batch, prompt and output lengths
// does at least the other's work: more sequences, longer contexts, as many steps or more; every decode step's
// kernels read at least as many bytes. It cannot be faster, beyond the benchmark's noise. A run measured more than
// kContradictedSlowdown x the time of such a larger run is contradicted by its own sweep: an engine's first,
// cold-clocked or disturbed measurement, not the steady state a model predicts. The same holds for a median decode
// step (SGLang's, LMDeploy's) and, at equal output lengths, a serving run's mean TPOT (a longer output spreads the
// newcomers' prefills over more steps, so output lengths are not compared there).
//
// Example: LLM-Inference-Bench's vLLM 0.6.1 ROCm on MI300X, Qwen2 7B at TP 1, batch 1: 128 tokens in and out took
// 2.99 s, 256 in and out 1.93 s (twice the work in 1.55x less time) and batch 16 of 128 tokens 1.45 s (2.06x less);
// Llama 2 7B batch 1, 128 tokens: 2.15 s against 1.45 s at batch 16. 12 of that table's 480 runs are contradicted so
// (every one at batch 1, 11 of them at 128 tokens); none of the 1,033 runs of the H100 and A100 tables even by 3 %.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "treering/validate/engine_runs.hpp"

namespace treering::validate {

// How much longer than a larger run of its setup a run may take before its sweep contradicts it: the benchmarks
// average 10-30 iterations after warm-up, whose means repeat within a few per cent; 10 % is well beyond that noise.
constexpr double kContradictedSlowdown = 1.10;

struct ContradictedRun {
  std::size_t run = 0;     // index into the runs
  std::size_t larger = 0;  // the larger run of the same setup it took longest against (the fastest of them)
  double slowdown = 0;     // measured_s of the run / measured_s of `larger` (> kContradictedSlowdown)
  // e.g. "2.99 s, 2.06x the 1.448 s of a larger run of the same setup (batch 16, 128 in, 128 out: t.csv line 9)"
  std::string text;
};

// A ratio of two runs' times as the reports write it: 2.98983 / 1.44788 = 2.06497 -> "2.06x", kContradictedSlowdown
// -> "1.10x".
std::string slowdown_text(double ratio);

// The runs of `runs` contradicted by a larger run among them, in the order of `runs`.
std::vector<ContradictedRun> contradicted_runs(const std::vector<EngineRun>& runs);

}  // namespace treering::validate
