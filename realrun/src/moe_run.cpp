// An MoE layer with expert parallelism over ranks (moe_run.hpp).
#include "treering/realrun/moe_run.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "treering/topologies/input_error.hpp"

namespace treering::realrun {
namespace {

using topologies::InputError;

// splitmix64's finaliser: a well-mixed 64-bit value of its input.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Value `index` of stream `stream`, uniform in [-1, 1).
float uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t bits = mix(seed ^ mix(stream * 0x100000001B3ULL) ^ mix(index + 0x5DEECE66DULL));
  return static_cast<float>(static_cast<double>(bits >> 40) / 8388608.0 - 1.0);  // 24 bits over 2^23, minus 1
}

std::vector<float> made_up(std::size_t count, std::uint64_t seed, std::uint64_t stream, float scale) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = scale * uniform(seed, stream, i);
  return values;
}

constexpr std::uint64_t kRouterStream = 1;
constexpr std::uint64_t kExpertStream = 1ULL << 20;  // + expert + its shared offset
constexpr std::uint64_t kTokenStream = 1ULL << 40;   // + rank

float silu(float x) { return x / (1.0f + std::exp(-x)); }

// Each expert's weights once (the layer's experts as a rank meets them).
class ExpertCache {
 public:
  ExpertCache(const MoeShape& shape, std::uint64_t seed) : shape_(shape), seed_(seed) {}
  const ExpertWeights& at(int expert) {
    auto found = cache_.find(expert);
    if (found == cache_.end()) found = cache_.emplace(expert, expert_weights(shape_, expert, seed_)).first;
    return found->second;
  }

 private:
  const MoeShape& shape_;
  std::uint64_t seed_;
  std::map<int, ExpertWeights> cache_;
};

}  // namespace

double moe_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    largest = std::max(largest, static_cast<double>(std::abs(want[i])));
    worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
  }
  return largest > 0 ? worst / largest : worst;
}

MoeShape moe_shape(const model::Workload& w, std::optional<int> hidden, std::optional<int> intermediate) {
  if (w.experts <= 0 || w.experts_per_token <= 0)
    throw InputError("treering-realrun moe needs an MoE workload: " + w.name + " has no routed experts");
  MoeShape shape;
  shape.hidden = hidden.value_or(w.hidden_size);
  shape.intermediate =
      intermediate.value_or(w.moe_intermediate_size > 0 ? w.moe_intermediate_size : w.intermediate_size);
  if (shape.hidden < 1 || shape.intermediate < 1)
    throw InputError("--hidden and --expert-intermediate must be at least 1");
  shape.experts = w.experts;
  shape.top_k = w.experts_per_token;
  shape.groups = w.expert_groups;
  shape.groups_per_token = w.expert_groups_per_token;
  shape.shared_experts = w.shared_experts;
  const double bytes = 3.0 * shape.hidden * shape.intermediate * 4 * (shape.experts + shape.shared_experts);
  if (bytes > 2.0 * (1ULL << 30)) {
    throw InputError(w.name + "'s experts at hidden " + std::to_string(shape.hidden) + " x " +
                     std::to_string(shape.intermediate) + " need " + std::to_string(bytes / (1ULL << 30)) +
                     " GiB of float32 weights (at most 2): shrink them with --hidden and --expert-intermediate");
  }
  return shape;
}

ExpertWeights expert_weights(const MoeShape& shape, int expert, std::uint64_t seed) {
  const std::uint64_t stream = kExpertStream + static_cast<std::uint64_t>(expert + (1 << 16)) * 4;
  const std::size_t size = static_cast<std::size_t>(shape.hidden) * shape.intermediate;
  const float in_scale = 1.0f / std::sqrt(static_cast<float>(shape.hidden));
  const float out_scale = 1.0f / std::sqrt(static_cast<float>(shape.intermediate));
  return {made_up(size, seed, stream, in_scale), made_up(size, seed, stream + 1, in_scale),
          made_up(size, seed, stream + 2, out_scale)};
}

std::vector<float> expert_forward(const MoeShape& shape, const ExpertWeights& weights, const float* x) {
  const std::size_t hidden = static_cast<std::size_t>(shape.hidden),
                    width = static_cast<std::size_t>(shape.intermediate);
  std::vector<float> inner(width);
  for (std::size_t i = 0; i < width; ++i) {
    float gate = 0, up = 0;
    for (std::size_t j = 0; j < hidden; ++j) {
      gate += weights.gate[i * hidden + j] * x[j];
      up += weights.up[i * hidden + j] * x[j];
    }
    inner[i] = silu(gate) * up;
  }
  std::vector<float> out(hidden, 0.0f);
  for (std::size_t j = 0; j < hidden; ++j) {
    for (std::size_t i = 0; i < width; ++i) out[j] += weights.down[j * width + i] * inner[i];
  }
  return out;
}

Routing route(const MoeShape& shape, const std::vector<float>& scores) {
  const int experts = shape.experts;
  std::vector<bool> allowed(static_cast<std::size_t>(experts), true);
  if (shape.groups > 1 && shape.groups_per_token < shape.groups) {
    const int size = experts / shape.groups;
    std::vector<std::pair<float, int>> group_scores;  // (sum of its two best, group)
    for (int g = 0; g < shape.groups; ++g) {
      std::vector<float> members(scores.begin() + g * size, scores.begin() + (g + 1) * size);
      std::sort(members.begin(), members.end(), std::greater<>());
      group_scores.emplace_back(members[0] + (size > 1 ? members[1] : 0.0f), g);
    }
    std::stable_sort(group_scores.begin(), group_scores.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::fill(allowed.begin(), allowed.end(), false);
    for (int kept = 0; kept < shape.groups_per_token; ++kept) {
      const int g = group_scores[static_cast<std::size_t>(kept)].second;
      std::fill(allowed.begin() + g * size, allowed.begin() + (g + 1) * size, true);
    }
  }
  std::vector<int> order(static_cast<std::size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (allowed[static_cast<std::size_t>(a)] != allowed[static_cast<std::size_t>(b)])
      return static_cast<bool>(allowed[static_cast<std::size_t>(a)]);
    return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
  });
  Routing routing;
  float total = 0;
  for (int slot = 0; slot < shape.top_k; ++slot) {
    routing.experts.push_back(order[static_cast<std::size_t>(slot)]);
    total += scores[static_cast<std::size_t>(order[static_cast<std::size_t>(slot)])];
  }
  for (int e : routing.experts) routing.weights.push_back(scores[static_cast<std::size_t>(e)] / total);
  return routing;
}

std::vector<float> router_scores(const MoeShape& shape, const float* x, std::uint64_t seed) {
  const std::size_t hidden = static_cast<std::size_t>(shape.hidden);
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.hidden));
  std::vector<float> scores(static_cast<std::size_t>(shape.experts));
  for (std::size_t e = 0; e < scores.size(); ++e) {
    float logit = 0;
    for (std::size_t j = 0; j < hidden; ++j) logit += scale * uniform(seed, kRouterStream, e * hidden + j) * x[j];
    scores[e] = 1.0f / (1.0f + std::exp(-logit));
  }
  return scores;
}

std::vector<float> token_states(const MoeShape& shape, int rank, int tokens, std::uint64_t seed) {
  return made_up(static_cast<std::size_t>(tokens) * static_cast<std::size_t>(shape.hidden), seed,
                 kTokenStream + static_cast<std::uint64_t>(rank), 1.0f);
}

std::vector<ExpertWeights> shared_weights(const MoeShape& shape, std::uint64_t seed) {
  std::vector<ExpertWeights> shared;
  for (int s = 0; s < shape.shared_experts; ++s) shared.push_back(expert_weights(shape, -1 - s, seed));
  return shared;
}

std::vector<float> combine_token(const MoeShape& shape, const Routing& routing,
                                 const std::vector<std::vector<float>>& slot_outputs, const float* x,
                                 const std::vector<ExpertWeights>& shared) {
  std::vector<float> out(static_cast<std::size_t>(shape.hidden), 0.0f);
  for (std::size_t slot = 0; slot < routing.experts.size(); ++slot) {
    for (std::size_t j = 0; j < out.size(); ++j) out[j] += routing.weights[slot] * slot_outputs[slot][j];
  }
  for (const ExpertWeights& weights : shared) {
    const std::vector<float> y = expert_forward(shape, weights, x);
    for (std::size_t j = 0; j < out.size(); ++j) out[j] += y[j];
  }
  return out;
}

std::vector<float> reference_layer(const MoeShape& shape, const std::vector<float>& states, int tokens,
                                   std::uint64_t seed) {
  ExpertCache experts(shape, seed);
  const std::vector<ExpertWeights> shared = shared_weights(shape, seed);
  std::vector<float> out;
  for (int t = 0; t < tokens; ++t) {
    const float* x = states.data() + static_cast<std::size_t>(t) * static_cast<std::size_t>(shape.hidden);
    const Routing routing = route(shape, router_scores(shape, x, seed));
    std::vector<std::vector<float>> slots;
    for (int e : routing.experts) slots.push_back(expert_forward(shape, experts.at(e), x));
    const std::vector<float> token = combine_token(shape, routing, slots, x, shared);
    out.insert(out.end(), token.begin(), token.end());
  }
  return out;
}

}  // namespace treering::realrun
