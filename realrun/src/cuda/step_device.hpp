// One tensor-parallel rank of a real decode step on the device: its weights (random bf16, never zeros), its KV
// cache (random, seq_len + 1 tokens per layer) and its buffers, and the enqueue of the step over every rank
// (loopback: the ranks run one after another on one stream and the collectives are device copies). Private to
// realrun; step_run.hpp says what the step computes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "device_memory.hpp"
#include "step_gemm.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/step_run.hpp"

namespace treering::realrun::cuda::detail {

struct LayerTensors {
  const std::uint16_t *attention_norm = nullptr, *qkv = nullptr, *o = nullptr;
  const std::uint16_t *mlp_norm = nullptr, *gate_up = nullptr, *down = nullptr;
  std::uint16_t *k_cache = nullptr, *v_cache = nullptr;
};

struct RankState {
  Device<std::uint16_t> weights, cache;
  std::vector<LayerTensors> layers;
  const std::uint16_t *final_norm = nullptr, *lm_head = nullptr;
  Device<std::uint16_t> x, h, qkv, q, attended, partial, gate_up, activated, logits;
  Device<float> o, lse;
  SplitKvAttention attention;
  RankState(const StepShape& shape, std::uint64_t seed, int rank);
};

// Boundaries between the step's parts as timing events: an event where the part changes, its time the gap to the
// next. `external`: events recorded into a CUDA graph being captured (cudaEventRecordExternal), read after each
// replay; else plain events on an uncaptured pass.
class PartMarks {
 public:
  explicit PartMarks(bool external) : external_(external) {}
  ~PartMarks();
  PartMarks(const PartMarks&) = delete;
  PartMarks& operator=(const PartMarks&) = delete;
  void mark(StepPart part, cudaStream_t stream);
  void finish(cudaStream_t stream);
  // Seconds per part and the whole, once the stream has passed the last mark.
  std::array<double, kStepParts> read(double& whole_s) const;
  std::array<int, kStepParts> intervals() const;  // how many intervals each part's time is made of

 private:
  bool external_;
  std::vector<cudaEvent_t> events_;
  std::vector<int> parts_;  // the part each event opens (-1: the end)
  int current_ = -1;
};

class StepRunner {
 public:
  StepRunner(const StepShape& shape, std::uint64_t seed);
  // One step for every rank on `stream`, marking parts when `marks` is given.
  void enqueue(cudaStream_t stream, PartMarks* marks);
  StepCollectiveCount collectives_per_step() const { return per_step_; }
  std::vector<int> next_tokens() const;  // after a step: rank 0's argmax of every sequence
  long long non_finite_hidden() const;   // after a step: NaN or inf in rank 0's final hidden state
  StepOutputs outputs() const;           // after a step: rank 0's hidden state, the logits, the argmax

 private:
  void attention_block(int layer, cudaStream_t stream, PartMarks* marks);
  void mlp_block(int layer, cudaStream_t stream, PartMarks* marks);
  void lm_head(cudaStream_t stream, PartMarks* marks);
  void allreduce(cudaStream_t stream, PartMarks* marks);
  StepShape shape_;
  LtContext lt_;
  LtGemm qkv_, o_, gate_up_, down_, lm_head_;
  Device<std::uint16_t> x0_, gathered_;  // the new tokens' hidden state; the gathered logits (tp > 1)
  Device<int> next_;
  std::vector<std::unique_ptr<RankState>> ranks_;
  StepCollectiveCount counted_, per_step_;
};

}  // namespace treering::realrun::cuda::detail
