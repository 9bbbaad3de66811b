// libFuzzer target: a workload file (YAML) through load_workload_file. The loader takes only a path, so each input
// is written to a scratch file of this process (fuzz_support.hpp) first.
// Bad input must end in InputError (or std::invalid_argument); anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"

using namespace treering::topologies;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static treering::fuzz::ScratchFile file("workload");
  const std::string& path = file.write(data, size);
  try {
    const Workload workload = load_workload_file(path);
    treering::fuzz::check(workload.layers >= 1 && workload.kv_heads >= 1 && workload.head_dim >= 1,
                          "a loaded workload has positive dimensions");
    treering::fuzz::check(workload.query_heads % workload.kv_heads == 0, "query_heads is a multiple of kv_heads");
    if (workload.kv_lora_rank > 0) {  // latent attention: one latent head, a hidden size of its own
      treering::fuzz::check(
          workload.kv_heads == 1 && workload.head_dim == workload.kv_lora_rank + workload.qk_rope_head_dim,
          "latent attention: kv_heads 1, head_dim = kv_lora_rank + qk_rope_head_dim");
      treering::fuzz::check(workload.hidden_size >= 1, "latent attention has a hidden size");
    } else {
      treering::fuzz::check(workload.hidden_size == workload.query_heads * workload.head_dim,
                            "hidden_size = query_heads x head_dim (without latent attention)");
    }
    treering::fuzz::check(workload.kv_cache_bytes == 2 || (workload.kv_cache_bytes == 1 && workload.kv_lora_rank > 0),
                          "an fp8 KV cache only with latent attention");
  } catch (const InputError& error) {
    treering::fuzz::check(!error.message().empty(), "an InputError says what is wrong");
  } catch (const std::invalid_argument&) {}
  return 0;
}
