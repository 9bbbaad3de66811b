// Latent-attention (MLA) workloads: parameters and cache counted by hand from DeepSeek's and Moonshot's config.json.
#include <doctest/doctest.h>

#include "treering/model/layout.hpp"
#include "treering/model/weights.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/input_error.hpp"

using namespace treering;

TEST_CASE("deepseek-v3: 671B parameters, about 37B active, 70,272 B of bf16 latent per token") {
  const model::Workload& w = model::find_workload("deepseek-v3");
  CHECK(model::has_latent_attention(w));
  CHECK(w.kv_heads == 1);
  CHECK(w.head_dim == 576);  // 512 + 64: the absorbed kernel's key width
  CHECK(model::attention_value_dim(w) == 512);
  const model::LayerWeights layer = model::layer_weights(w);
  CHECK(layer.replicated == 15140864.0);  // 7168 x 576 + 512 + 7168 x 1536 + 1536
  CHECK(layer.q == 37748736.0);           // 1536 x 128 x (128 + 64)
  CHECK(layer.v == 16777216.0);           // 512 x 128 x (128 + 128)
  CHECK(layer.o == 117440512.0);          // 128 x 128 x 7168
  CHECK(layer.k == 0.0);
  CHECK(layer.mlp_dense == 396361728.0);           // 3 x 7168 x 18432, in the first 3 layers
  CHECK(layer.experts_routed_each == 44040192.0);  // 3 x 7168 x 2048
  CHECK(model::dense_mlp_layers(w) == 3);
  CHECK(model::moe_layers(w) == 58);
  // 61 x (187,107,328 + 14,336 norms) + 3 x 396,361,728 + 58 x (257 x 44,040,192 + 256 x 7168 router)
  //   + 2 x 129,280 x 7168 + 7168 = 671,026,404,352 ("671B total")
  CHECK(model::shape_parameters(w) == 671026404352.0);
  // the same with 8 routed experts a layer: 58 x (9 x 44,040,192 + 1,835,008) = 23,095,410,688 instead:
  // 37,552,282,624 ("37B activated")
  CHECK(model::active_parameters(w) == 37552282624.0);
  CHECK(model::kv_cache_bytes_per_token(w) == 70272.0);  // 576 x 2 B x 61
}

TEST_CASE("the other latent presets: kimi-k2 about 1T, deepseek-v2-lite 15.7B with 2.4B active") {
  const model::Workload& kimi = model::find_workload("kimi-k2");
  // 61 x (7168 x 576 + 512 + 7168 x 1536 + 1536 + 1536 x 64 x 192 + 512 x 64 x 256 + 64 x 128 x 7168 + 14,336)
  //   = 61 x 101,138,432 = 6,169,444,352; dense 396,361,728; 60 x (385 x 44,040,192 + 384 x 7168) =
  //   1,017,493,585,920; 2 x 163,840 x 7168 + 7168 = 2,348,817,408: 1,026,408,209,408 (Moonshot: "1 trillion")
  CHECK(model::shape_parameters(kimi) == 1026408209408.0);
  const model::Workload& lite = model::find_workload("deepseek-v2-lite");
  CHECK(lite.q_lora_rank == 0);
  // attention: 2048 x 576 + 512 + 2048 x 16 x 192 + 512 x 16 x 256 + 16 x 128 x 2048 = 13,763,072; norms 4096;
  // 27 x 13,767,168 = 371,713,536; dense 3 x 2048 x 10944 = 67,239,936; expert 3 x 2048 x 1408 = 8,650,752:
  // 26 x (66 x 8,650,752 + 64 x 2048) = 14,848,098,304; 2 x 102,400 x 2048 + 2048 = 419,432,448
  CHECK(model::shape_parameters(lite) == 15706484224.0);  // "15.7B"
  // active: 26 x (8 x 8,650,752 + 131,072) = 1,802,764,288 instead of 14,848,098,304: 2,661,150,208 (DeepSeek:
  // "2.4B activated", which leaves the embedding out: 2,661,150,208 - 209,715,200 = 2.45e9)
  CHECK(model::active_parameters(lite) == 2661150208.0);
}

TEST_CASE("tensor parallelism splits the heads and copies the latent; the slice keeps the model's width") {
  const model::Workload& w = model::find_workload("deepseek-v3");
  const model::Workload slice = model::head_slice(w, 8);
  CHECK(slice.query_heads == 16);
  CHECK(slice.kv_heads == 1);  // every TP rank holds the whole latent: 8 copies at tp 8
  CHECK(slice.hidden_size == 7168);
}

TEST_CASE("latent attention's shape is checked") {
  model::Workload w = model::find_workload("deepseek-v3");
  w.kv_heads = 2;
  CHECK_THROWS_AS(model::validate(w), topologies::InputError);
  w = model::find_workload("deepseek-v3");
  w.head_dim = 192;
  CHECK_THROWS_WITH_AS(model::validate(w), doctest::Contains("kv_lora_rank + qk_rope_head_dim"),
                       topologies::InputError);
  model::Workload llama = model::find_workload("llama3.1-8b");
  llama.kv_cache_dtype = "fp8";
  llama.kv_cache_bytes = 1;
  CHECK_THROWS_WITH_AS(model::validate(llama), doctest::Contains("latent attention only"), topologies::InputError);
  w = model::find_workload("deepseek-v3");
  w.kv_cache_dtype = "fp8";
  w.kv_cache_bytes = 1;
  model::validate(w);
  CHECK(model::kv_cache_bytes_per_token(w) == 35136.0);  // 576 x 1 B x 61
}
