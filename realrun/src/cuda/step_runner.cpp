// step_device.hpp's StepRunner: a layer's attention block and MLP block for every rank, then the LM head; the
// loopback's all-reduces and all-gather as device copies, each rank's bytes counted.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "step_device.hpp"
#include "step_kernels.hpp"
#include "treering/realrun/half.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::cuda::detail {

StepRunner::StepRunner(const StepShape& s, std::uint64_t seed)
    : shape_(s),
      qkv_(lt_, static_cast<int>(s.qkv_rows()), s.hidden, s.batch, false),
      o_(lt_, s.hidden, static_cast<int>(s.attention_width()), s.batch, s.tp == 1),
      gate_up_(lt_, 2 * s.intermediate, s.hidden, s.batch, false),
      down_(lt_, s.hidden, s.intermediate, s.batch, s.tp == 1),
      lm_head_(lt_, s.vocab, s.hidden, s.batch, false),
      x0_(static_cast<std::size_t>(s.batch) * s.hidden),
      gathered_(s.tp > 1 ? static_cast<std::size_t>(s.batch) * s.full_vocab : 0),
      next_(static_cast<std::size_t>(s.batch)) {
  if (s.tp > kMaxLoopbackRanks) throw topologies::InputError("the loopback step runs at most 8 ranks");
  fill_uniform(x0_.data, x0_.size, step_hidden_stream(seed), 1.0f, nullptr);
  for (int r = 0; r < s.tp; ++r) ranks_.push_back(std::make_unique<RankState>(s, seed, r));
}

void StepRunner::enqueue(cudaStream_t stream, PartMarks* marks) {
  auto mark = [&](StepPart part) {
    if (marks) marks->mark(part, stream);
  };
  counted_ = {};
  mark(StepPart::other);
  for (auto& rank : ranks_) {
    check(cudaMemcpyAsync(rank->x.data, x0_.data, x0_.size * 2, cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (x)");
  }
  for (int l = 0; l < shape_.layers; ++l) {
    attention_block(l, stream, marks);
    mlp_block(l, stream, marks);
  }
  lm_head(stream, marks);
  if (marks) marks->finish(stream);
  per_step_ = counted_;
}

void StepRunner::attention_block(int layer, cudaStream_t stream, PartMarks* marks) {
  auto mark = [&](StepPart part) {
    if (marks) marks->mark(part, stream);
  };
  const AttentionShape attention{shape_.batch, shape_.query_heads, shape_.kv_heads, shape_.head_dim};
  for (auto& rank : ranks_) {
    RankState& r = *rank;
    const LayerTensors& t = r.layers[static_cast<std::size_t>(layer)];
    mark(StepPart::other);
    rms_norm(r.x.data, t.attention_norm, r.h.data, shape_.batch, shape_.hidden, stream);
    mark(StepPart::projections);
    qkv_.run(t.qkv, r.h.data, r.qkv.data, stream);
    mark(StepPart::other);
    rope_append({.qkv = r.qkv.data,
                 .q = r.q.data,
                 .k_cache = t.k_cache,
                 .v_cache = t.v_cache,
                 .batch = shape_.batch,
                 .query_heads = shape_.query_heads,
                 .kv_heads = shape_.kv_heads,
                 .head_dim = shape_.head_dim,
                 .position = shape_.seq_len},
                stream);
    mark(StepPart::attention);
    r.attention.run(attention, Dtype::bf16, r.q.data, t.k_cache, t.v_cache, shape_.seq_len + 1, r.o.data, r.lse.data, 0,
                    stream);
    to_bf16(r.o.data, r.attended.data, r.o.size, stream);
    mark(StepPart::projections);
    o_.run(t.o, r.attended.data, shape_.tp == 1 ? r.x.data : r.partial.data, stream);
  }
  if (shape_.tp > 1) allreduce(stream, marks);
}

void StepRunner::mlp_block(int layer, cudaStream_t stream, PartMarks* marks) {
  auto mark = [&](StepPart part) {
    if (marks) marks->mark(part, stream);
  };
  for (auto& rank : ranks_) {
    RankState& r = *rank;
    const LayerTensors& t = r.layers[static_cast<std::size_t>(layer)];
    mark(StepPart::other);
    rms_norm(r.x.data, t.mlp_norm, r.h.data, shape_.batch, shape_.hidden, stream);
    mark(StepPart::mlp);
    gate_up_.run(t.gate_up, r.h.data, r.gate_up.data, stream);
    silu_mul(r.gate_up.data, r.activated.data, shape_.batch, shape_.intermediate, stream);
    down_.run(t.down, r.activated.data, shape_.tp == 1 ? r.x.data : r.partial.data, stream);
  }
  if (shape_.tp > 1) allreduce(stream, marks);
}

void StepRunner::allreduce(cudaStream_t stream, PartMarks* marks) {
  if (marks) marks->mark(StepPart::tp_communication, stream);
  RankPointers pointers;
  for (int r = 0; r < shape_.tp; ++r) {
    pointers.partial[r] = ranks_[static_cast<std::size_t>(r)]->partial.data;
    pointers.x[r] = ranks_[static_cast<std::size_t>(r)]->x.data;
  }
  const std::size_t values = static_cast<std::size_t>(shape_.batch) * shape_.hidden;
  allreduce_add(pointers, shape_.tp, values, stream);
  ++counted_.allreduces;
  counted_.allreduce_bytes = static_cast<double>(values) * 2;
}

void StepRunner::lm_head(cudaStream_t stream, PartMarks* marks) {
  auto mark = [&](StepPart part) {
    if (marks) marks->mark(part, stream);
  };
  for (auto& rank : ranks_) {
    mark(StepPart::lm_head);
    rms_norm(rank->x.data, rank->final_norm, rank->h.data, shape_.batch, shape_.hidden, stream);
    lm_head_.run(rank->lm_head, rank->h.data, rank->logits.data, stream);
  }
  const std::uint16_t* logits = ranks_.front()->logits.data;
  if (shape_.tp > 1) {  // each rank's [batch][vocab / tp] into its columns of [batch][vocab]
    mark(StepPart::tp_communication);
    const std::size_t slice_bytes = static_cast<std::size_t>(shape_.vocab) * 2;
    for (int r = 0; r < shape_.tp; ++r) {
      check(cudaMemcpy2DAsync(gathered_.data + static_cast<std::size_t>(r) * shape_.vocab,
                              static_cast<std::size_t>(shape_.full_vocab) * 2,
                              ranks_[static_cast<std::size_t>(r)]->logits.data, slice_bytes, slice_bytes,
                              static_cast<std::size_t>(shape_.batch), cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpy2DAsync (logits all-gather)");
    }
    counted_.allgathers = 1;
    counted_.allgather_bytes = static_cast<double>(shape_.batch) * shape_.full_vocab * 2;
    logits = gathered_.data;
  }
  mark(StepPart::lm_head);
  for (int r = 0; r < shape_.tp; ++r) argmax_rows(logits, shape_.batch, shape_.full_vocab, next_.data, stream);
}

std::vector<int> StepRunner::next_tokens() const {
  std::vector<int> tokens(next_.size);
  check(cudaMemcpy(tokens.data(), next_.data, tokens.size() * sizeof(int), cudaMemcpyDeviceToHost),
        "cudaMemcpy (next tokens)");
  return tokens;
}

namespace {

std::vector<float> host_floats(const std::uint16_t* device, std::size_t count) {
  std::vector<std::uint16_t> bits(count);
  check(cudaMemcpy(bits.data(), device, count * 2, cudaMemcpyDeviceToHost), "cudaMemcpy (step outputs)");
  std::vector<float> values(count);
  std::transform(bits.begin(), bits.end(), values.begin(), bf16_to_float);
  return values;
}

}  // namespace

StepOutputs StepRunner::outputs() const {
  StepOutputs out;
  out.hidden = host_floats(ranks_.front()->x.data, ranks_.front()->x.size);
  const std::size_t logits = static_cast<std::size_t>(shape_.batch) * shape_.full_vocab;
  out.logits = host_floats(shape_.tp > 1 ? gathered_.data : ranks_.front()->logits.data, logits);
  out.next_tokens = next_tokens();
  return out;
}

long long StepRunner::non_finite_hidden() const {
  std::vector<std::uint16_t> x(ranks_.front()->x.size);
  check(cudaMemcpy(x.data(), ranks_.front()->x.data, x.size() * 2, cudaMemcpyDeviceToHost),
        "cudaMemcpy (hidden state)");
  return std::count_if(x.begin(), x.end(), [](std::uint16_t bits) { return (bits & 0x7f80u) == 0x7f80u; });
}

}  // namespace treering::realrun::cuda::detail
