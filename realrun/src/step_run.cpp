// step_run.hpp: the shapes, bytes and collectives of a real decode step, without a GPU.
#include "treering/realrun/step_run.hpp"
#include "treering/topologies/input_error.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace treering::realrun {
namespace {

void require_divides(int tp, int count, const char* what, const std::string& workload) {
  if (count % tp != 0) {
    throw topologies::InputError("tp " + std::to_string(tp) + " does not divide " + workload + "'s " + what + " (" +
                                 std::to_string(count) + ")");
  }
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

}  // namespace

StepShape step_shape(const model::Workload& w, int batch, long long seq_len, int tp) {
  const std::string who = "workload '" + w.name + "'";
  if (w.intermediate_size <= 0 || w.vocab_size <= 0) {
    throw topologies::InputError(
        who + " gives no intermediate_size or vocab_size: a real step needs the whole model's shape");
  }
  if (w.experts > 0)
    throw topologies::InputError(who + " has experts: the real step runs dense Llama-architecture models");
  if (w.kv_lora_rank > 0) {
    throw topologies::InputError(who +
                                 " has multi-head latent attention: the real step runs grouped-query attention "
                                 "(treering-realrun decode --backend cpu runs MLA's attention)");
  }
  if (w.dtype != "bf16" || w.weight_bytes != 2 || w.attention_weight_bytes != 2) {
    throw topologies::InputError(who + " is not bf16 throughout: the real step runs bf16 weights and activations");
  }
  if (w.head_dim != 64 && w.head_dim != 128) {
    throw topologies::InputError(who + " has head dim " + std::to_string(w.head_dim) +
                                 ": the attention kernel has 64 and 128");
  }
  if (w.hidden_size % 8 != 0)
    throw topologies::InputError(who +
                                 " has a hidden size that is not a multiple of 8 (the kernels load 8 values at once)");
  if (tp < 1 || tp > 8) throw topologies::InputError("tp must be 1 to 8 (got " + std::to_string(tp) + ")");
  if (batch < 1) throw topologies::InputError("batch must be at least 1");
  if (seq_len < 0) throw topologies::InputError("seq_len must not be negative");
  require_divides(tp, w.query_heads, "query heads", w.name);
  require_divides(tp, w.kv_heads, "KV heads", w.name);
  require_divides(tp, w.intermediate_size, "intermediate size", w.name);
  require_divides(tp, w.vocab_size, "vocabulary", w.name);
  StepShape s;
  s.workload = w.name;
  s.layers = w.layers;
  s.hidden = w.hidden_size;
  s.head_dim = w.head_dim;
  s.query_heads = w.query_heads / tp;
  s.kv_heads = w.kv_heads / tp;
  s.intermediate = w.intermediate_size / tp;
  s.vocab = w.vocab_size / tp;
  s.full_vocab = w.vocab_size;
  s.tied_embeddings = w.tie_word_embeddings;
  s.tp = tp;
  s.batch = batch;
  s.seq_len = seq_len;
  return s;
}

// Example: llama3.2-1b at tp 1 (hidden 2,048, 32 / 8 heads x 64, MLP 8,192, vocab 128,256, 16 layers): per layer
// QKV 3,072 x 2,048 + O 2,048 x 2,048 + gate/up 16,384 x 2,048 + down 2,048 x 8,192 + 2 norms = 60,821,504
// parameters; x 16 + LM head 262,668,288 + final norm 2,048 = 1,235,814,400 parameters (Meta: 1.24 B, with the LM head
// tied to the embedding) x 2 B = 2,471,628,800 B.
StepBytes step_bytes(const StepShape& s) {
  const double h = s.hidden;
  const double per_layer = static_cast<double>(s.qkv_rows()) * h + h * static_cast<double>(s.attention_width()) +
                           2.0 * s.intermediate * h + h * s.intermediate + 2 * h;
  StepBytes b;
  b.weights = 2.0 * (s.layers * per_layer + static_cast<double>(s.vocab) * h + h);
  b.kv_cache = 2.0 * s.layers * 2.0 * static_cast<double>(s.seq_len + 1) * s.batch * s.kv_heads * s.head_dim;
  const double tokens = s.batch;
  b.activations =
      2.0 * tokens *
          (4 * h + static_cast<double>(s.qkv_rows()) + static_cast<double>(s.attention_width()) + 3.0 * s.intermediate +
           s.full_vocab) +
      4.0 * tokens * (static_cast<double>(s.attention_width()) + s.query_heads) * 65;  // o and lse, 64 chunks
  return b;
}

void check_fits(const StepShape& shape, int ranks_on_device, double free_bytes) {
  const StepBytes b = step_bytes(shape);
  const double needed = ranks_on_device * b.total();
  if (needed > free_bytes) {
    throw topologies::InputError(shape.workload + " at batch " + std::to_string(shape.batch) + " and " +
                                 std::to_string(shape.seq_len) + " tokens needs " + gigabytes(needed) +
                                 " on the device (weights " + gigabytes(ranks_on_device * b.weights) + ", KV cache " +
                                 gigabytes(ranks_on_device * b.kv_cache) + "); " + gigabytes(free_bytes) + " are free");
  }
}

std::uint64_t step_rank_stream(std::uint64_t seed, int rank) {
  return (seed * 9973 + static_cast<std::uint64_t>(rank) + 1) << 20;
}
std::uint64_t step_hidden_stream(std::uint64_t seed) { return seed * 9973 << 20; }
float step_scale(long long fan_in) {
  return fan_in <= 0 ? 1.0f : static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan_in)));
}

const char* to_string(StepPart part) {
  switch (part) {
    case StepPart::attention: return "attention";
    case StepPart::projections: return "projections";
    case StepPart::mlp: return "mlp";
    case StepPart::other: return "other";
    case StepPart::lm_head: return "lm_head";
    case StepPart::tp_communication: return "tp_communication";
  }
  return "?";
}

StepCollectiveCount expected_collectives(const model::Workload& workload, const StepShape& shape) {
  StepCollectiveCount count;
  if (shape.tp < 2) return count;
  const model::StepCollectives c = model::step_collectives(workload, shape.batch);
  count.allreduces = c.hidden_allreduces;
  count.allreduce_bytes = c.hidden_allreduce_bytes;
  count.allgathers = 1;
  count.allgather_bytes = c.logits_allgather_bytes;
  return count;
}

}  // namespace treering::realrun
