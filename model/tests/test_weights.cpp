// Weights by part and the experts a batch touches, counted by hand from published configs.
#include <doctest/doctest.h>

#include "treering/model/weights.hpp"

using namespace treering;

TEST_CASE("llama3.1-405b: 405,853,388,800 parameters from its config.json shape") {
  const model::Workload& w = model::find_workload("llama3.1-405b");
  const model::LayerWeights layer = model::layer_weights(w);
  CHECK(layer.q == 268435456.0);           // 16384 x 128 x 128
  CHECK(layer.k == 16777216.0);            // 16384 x 8 x 128
  CHECK(layer.mlp_dense == 2617245696.0);  // 3 x 16384 x 53248
  CHECK(layer.norms == 32768.0);
  // 126 x 3,187,703,808 + 2 x 128,256 x 16,384 + 16,384 (final norm)
  CHECK(model::shape_parameters(w) == 405853388800.0);
  CHECK(model::lm_head_parameters(w) == 2101346304.0);
}

TEST_CASE("tied embeddings are held once; mixtral counts every expert") {
  const model::Workload& small = model::find_workload("llama3.2-1b");
  CHECK(model::embedding_parameters(small) == 0.0);
  CHECK(model::lm_head_parameters(small) == 128256.0 * 2048);
  // Llama 3.2 1B: 16 x (2 x 2048^2 + 2 x 2048 x 512 + 3 x 2048 x 8192 + 4096) + 128256 x 2048 + 2048
  //             = 16 x 60,821,504 + 262,668,288 + 2048 = 1,235,814,400 (Meta: 1.24B)
  CHECK(model::shape_parameters(small) == 1235814400.0);
  const model::Workload& mixtral = model::find_workload("mixtral-8x7b");
  const model::LayerWeights layer = model::layer_weights(mixtral);
  CHECK(layer.mlp_dense == 0.0);
  CHECK(layer.experts_routed_each == 3.0 * 4096 * 14336);
  CHECK(layer.router == 4096.0 * 8);
  // 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 8 x 176,160,768 + 32,768 + 8,192) + 2 x 32000 x 4096 + 4096
  //  = 32 x 1,451,270,144 + 262,144,000 + 4096 = 46,702,792,704 (Mistral AI: 46.7B)
  CHECK(model::shape_parameters(mixtral) == 46702792704.0);
}

TEST_CASE("experts touched: k at one token, all of them as the batch grows") {
  CHECK(model::expected_experts_touched(8, 2, 1) == doctest::Approx(2.0).scale(1e-12));
  CHECK(model::expected_experts_touched(8, 2, 4) == doctest::Approx(8.0 * (1 - 0.31640625)).scale(1e-12));  // 0.75^4
  CHECK(model::expected_experts_touched(8, 2, 1000) == doctest::Approx(8.0).scale(1e-12));
  CHECK(model::expected_experts_touched(0, 0, 4) == 0.0);
}

TEST_CASE("fp8 feed-forward weights: bytes per part, and the mean a head slice keeps") {
  const model::Workload& fp8 = model::find_workload("llama3.1-405b-fp8");
  // 126 x (570,425,344 attention x 2 B + 2,617,245,696 MLP x 1 B + 32,768 norms x 2 B)
  //   + (2 x 2,101,346,304 embedding and LM head + 16,384 final norm) x 2 B
  CHECK(model::model_weight_bytes(fp8) == 481933819904.0);
  CHECK(fp8.mean_weight_bytes == doctest::Approx(481933819904.0 / 405853388800.0).scale(1e-12));
  CHECK(model::find_workload("llama3.1-405b").mean_weight_bytes == doctest::Approx(2.0).scale(1e-12));
  model::Workload counted_only;  // a parameter count and nothing else: every weight at weight_bytes
  counted_only.parameters = 1e9;
  counted_only.weight_bytes = 1;
  CHECK(model::model_weight_bytes(counted_only) == 1e9);
}
