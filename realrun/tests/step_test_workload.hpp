// A Llama-architecture model small enough for the host reference step (step_run.hpp): 2 layers, hidden 256
// (4 query heads, 2 KV heads, x 64), MLP 512, vocabulary 1,000. Shared by the CPU and GPU tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "treering/model/workload.hpp"

namespace treering::realrun::testing {

inline model::Workload tiny_llama() {
  model::Workload w;
  w.name = "tiny-llama";
  w.layers = 2;
  w.query_heads = 4;
  w.kv_heads = 2;
  w.head_dim = 64;
  w.hidden_size = 256;
  w.intermediate_size = 512;
  w.vocab_size = 1000;
  return w;
}

// ||values - reference|| / ||reference||.
inline double normwise_error(const std::vector<float>& values, const std::vector<float>& reference) {
  double difference = 0, norm = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double d = static_cast<double>(values[i]) - reference[i];
    difference += d * d;
    norm += static_cast<double>(reference[i]) * reference[i];
  }
  return values.size() == reference.size() && norm > 0 ? std::sqrt(difference / norm) : INFINITY;
}

}  // namespace treering::realrun::testing
