// The paper's memory and volume formulas, and the plans' figures against them.
#include <doctest/doctest.h>

#include "treering/model/decode.hpp"
#include "treering/model/paper_formulas.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
namespace paper = treering::model::paper;

TEST_CASE("the paper's memory gap: 524 MB at hidden 2048, 1048.6 MB at 4096 (64,000 tokens per GPU, 16-bit)") {
  // Gap = Mem_ring - Mem_tree = 2btd - 2bn_h elements of 2 bytes.
  // d = 2048, n_h = 16: (2 x 64,000 x 2048 - 32) x 2 B = 524,287,936 B.
  const double gap_2048 =
      (paper::ring_memory_elements(1, 64000, 2048) - paper::tree_memory_elements(1, 64000, 2048, 16)) * 2;
  CHECK(gap_2048 == 524287936.0);
  // d = 4096, n_h = 32: (2 x 64,000 x 4096 - 64) x 2 B = 1,048,575,872 B = 1048.6 MB (the paper says 1040).
  const double gap_4096 =
      (paper::ring_memory_elements(1, 64000, 4096) - paper::tree_memory_elements(1, 64000, 4096, 32)) * 2;
  CHECK(gap_4096 == 1048575872.0);
}

TEST_CASE("volumes: V_ring counts p rotations, V_tree does not depend on N") {
  CHECK(paper::ring_volume_elements(1, 1000, 2048, 8) == 2.0 * 1000 * 2048 * 8);
  CHECK(paper::allreduce_volume_elements(2048, 8) == 2.0 * 7 / 8 * 2048);
  CHECK(paper::tree_volume_elements(1, 2048, 16, 8) == 2.0 * 7 / 8 * (2048 + 32));
}

namespace {

model::DecodeResult predict(model::DecodeAlgorithm algorithm, long long seq_len, int nodes) {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {nodes, std::nullopt});
  static std::vector<std::unique_ptr<topologies::Topology>> keep;  // the model refers to its topology
  keep.push_back(std::make_unique<topologies::Topology>(spec));
  model::DecodeModel model(*keep.back());
  model::PlanOptions paper_counting;
  paper_counting.stats_bytes = 2;  // the paper counts lse and the denominator in 16 bits too
  return model.predict(algorithm, model::find_workload("paper-mha16"), seq_len, paper_counting);
}

}  // namespace

TEST_CASE("the plans' memory and volume match the paper's formulas") {
  // 16 GPUs, 64,000 tokens each; b = 1, d = 2048, n_h = 16, 2-byte elements.
  const long long n = 16 * 64000;
  model::DecodeResult tree = predict(model::DecodeAlgorithm::tree, n, 2);
  CHECK(tree.memory.total == paper::tree_memory_elements(1, 64000, 2048, 16) * 2);  // one layer, no weights
  CHECK(tree.volume.per_gpu == doctest::Approx(paper::tree_volume_elements(1, 2048, 16, 16) * 2).scale(1e-12));
  model::DecodeResult ring = predict(model::DecodeAlgorithm::ring, n, 2);
  // Beyond the paper's Mem_ring the plan holds a second receive buffer (it forwards last round's block while
  // the next arrives: 2btd elements more with p > 2) and a running lse (b n_h) the paper leaves out.
  const double second_buffer = 2.0 * 64000 * 2048 * 2;
  CHECK(ring.memory.total == paper::ring_memory_elements(1, 64000, 2048) * 2 + second_buffer + 16 * 2);
  // p - 1 = 15 transfers of a block, not the paper's p = 16.
  CHECK(ring.volume.per_gpu == paper::ring_volume_elements(1, 64000, 2048, 16) * 2 * 15 / 16);
  CHECK(ring.memory.receive_buffers == 2 * second_buffer);
  CHECK(ring.memory.total - tree.memory.total == 524287936.0 + 32 + second_buffer);
}
