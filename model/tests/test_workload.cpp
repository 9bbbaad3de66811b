// Workload presets against their published model configurations.
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/model/workload.hpp"

using namespace treering::model;

TEST_CASE("the presets carry their published shapes") {
  // Tree Attention paper microbenchmark: 16 heads x 128, batch 1, 16-bit, one layer.
  const Workload& paper = find_workload("paper-mha16");
  CHECK(paper.query_heads == 16);
  CHECK(paper.kv_heads == 16);
  CHECK(paper.head_dim == 128);
  CHECK(paper.hidden_size == 2048);
  CHECK(paper.layers == 1);
  CHECK(paper.batch == 1);
  CHECK(paper.dtype_bytes == 2);
  // Llama 3.1 8B config.json: 32 layers, 32 heads, 8 KV heads, hidden 4096.
  const Workload& llama8b = find_workload("llama3.1-8b");
  CHECK(llama8b.layers == 32);
  CHECK(llama8b.kv_heads == 8);
  CHECK(llama8b.hidden_size == 4096);
  // Llama 3.1 70B: 80 layers, 64 heads, 8 KV heads, hidden 8192.
  const Workload& llama70b = find_workload("llama3.1-70b");
  CHECK(llama70b.layers == 80);
  CHECK(llama70b.hidden_size == 8192);
  // Llama 3.2 1B: 16 layers, hidden 2048 = 32 heads x 64.
  const Workload& llama1b = find_workload("llama3.2-1b");
  CHECK(llama1b.layers == 16);
  CHECK(llama1b.head_dim == 64);
  CHECK(llama1b.hidden_size == 2048);
}

TEST_CASE("KV cache per token: 2 x kv_heads x head_dim x bytes x layers") {
  CHECK(kv_cache_bytes_per_token(find_workload("llama3.1-8b")) ==
        doctest::Approx(131072).scale(1e-12));  // 2*8*128*2*32
  CHECK(kv_cache_bytes_per_token(find_workload("llama3.1-70b")) ==
        doctest::Approx(327680).scale(1e-12));                                                          // 2*8*128*2*80
  CHECK(kv_cache_bytes_per_token(find_workload("paper-mha16")) == doctest::Approx(8192).scale(1e-12));  // 2*16*128*2*1
}

TEST_CASE("presets are sorted by name and every one is valid") {
  const auto& presets = workload_presets();
  // paper-mha16, llama 3.2 1B, 3.1 8B, 70B, 405B, 405B fp8, mixtral 8x7B; deepseek-v3, deepseek-v2-lite, kimi-k2;
  // served models: llama 2 7B, 13B, 70B, llama 3 8B, 70B, mistral 7B, qwen2 7B, 72B
  REQUIRE(presets.size() == 18);
  for (size_t i = 1; i < presets.size(); ++i) CHECK(presets[i - 1].name < presets[i].name);
  for (const Workload& workload : presets) CHECK_NOTHROW(validate(workload));
}

TEST_CASE("impossible shapes and unknown names are refused") {
  Workload bad = find_workload("llama3.1-8b");
  bad.kv_heads = 5;
  CHECK_THROWS_WITH_AS(validate(bad), "workload 'llama3.1-8b': query_heads (32) must be a multiple of kv_heads (5)",
                       std::invalid_argument);
  bad = find_workload("llama3.1-8b");
  bad.hidden_size = 4000;
  CHECK_THROWS_AS(validate(bad), std::invalid_argument);
  bad = find_workload("llama3.1-8b");
  bad.batch = 0;
  CHECK_THROWS_AS(validate(bad), std::invalid_argument);
  CHECK_THROWS_WITH_AS(find_workload("gpt5"),
                       "unknown workload 'gpt5' (presets: deepseek-v2-lite, deepseek-v3, kimi-k2, llama2-13b, "
                       "llama2-70b, llama2-7b, llama3-70b, llama3-8b, llama3.1-405b, llama3.1-405b-fp8, llama3.1-70b, "
                       "llama3.1-8b, llama3.2-1b, mistral-7b, mixtral-8x7b, paper-mha16, qwen2-72b, qwen2-7b)",
                       std::invalid_argument);
}
