// Where a plan leaves its calibration (extrapolation.hpp): the spans a plan uses, worked out by hand, against the
// measured ranges of a calibration of one PCIe node.
#include <doctest/doctest.h>

#include "treering/model/decode.hpp"
#include "treering/model/extrapolation.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// Measured: attention over 1k-4k tokens, sends of 8 B-16 MiB (16,777,216 B = "16.8 MB"), all-reduces of
// 8 B-4 MiB on 2 ranks.
topologies::Calibration measured_calibration() {
  topologies::Calibration c;
  c.provenance.inputs = {"bench.json"};
  c.provenance.tokens = std::pair<long long, long long>{1000, 4000};
  c.provenance.p2p_sizes_bytes = std::pair{8.0, 16777216.0};
  c.provenance.sizes_bytes = std::pair{8.0, 4194304.0};
  c.provenance.ranks = std::pair{2, 2};
  c.p2p_scale_up = {{0, 20e-6, 11e9}};
  c.scale_up = topologies::TierCalibration{std::nullopt, 10e9};
  c.hbm_efficiency = 0.5;
  return c;
}

std::vector<std::string> reasons(const topologies::Calibration* calibration, model::DecodeAlgorithm algorithm,
                                 long long tokens, int ranks = 2) {
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(spec, {1, std::nullopt});
  if (calibration) spec.calibration = *calibration;
  const topologies::Topology topology(spec);
  std::vector<int> gpus;
  for (int g = 0; g < ranks; ++g) gpus.push_back(g);
  const model::DecodeModel decode(topology, gpus);
  return model::extrapolations(topology, decode.plan(algorithm, model::find_workload("paper-mha16"), tokens));
}

}  // namespace

TEST_CASE("a ring whose blocks are larger than any send measured extrapolates") {
  // 8,000 tokens on 2 ranks: blocks of 4,000 tokens x 8,192 B (2 x 16 heads x 128 x 2 B) = 32,768,000 B.
  const topologies::Calibration c = measured_calibration();
  const auto why = reasons(&c, model::DecodeAlgorithm::ring, 8000);
  REQUIRE(why.size() == 1);
  CHECK(why[0] == "sends inside a domain of up to 32.77 MB, outside the measured 8 B-16.78 MB");
}

TEST_CASE("a tree inside every measured range does not") {
  // Shards of 4,000 tokens; all-reduces of 4,096 B (o: 16 x 128 x 2 B) and 64 B (16 fp32 statistics), 2 ranks.
  const topologies::Calibration c = measured_calibration();
  CHECK(reasons(&c, model::DecodeAlgorithm::tree, 8000).empty());
}

TEST_CASE("shards longer or shorter than the kernels timed") {
  const topologies::Calibration c = measured_calibration();
  CHECK(model::join_reasons(reasons(&c, model::DecodeAlgorithm::tree, 16000)) ==
        "attention over up to 8k tokens, outside the measured 1k-4k tokens");
  CHECK(model::join_reasons(reasons(&c, model::DecodeAlgorithm::tree, 1000)) ==
        "attention over down to 500 tokens, outside the measured 1k-4k tokens");
}

TEST_CASE("what the calibration did not measure at all") {
  topologies::Calibration c = measured_calibration();
  c.p2p_scale_up.clear();
  c.hbm_efficiency.reset();
  CHECK(model::join_reasons(reasons(&c, model::DecodeAlgorithm::ring, 4000)) ==
        "attention not calibrated (default HBM efficiency); sends inside a domain not measured (priced from the "
        "collectives' fit)");
}

TEST_CASE("attention measured by kernel shape, but not the plan's shape") {
  topologies::Calibration c = measured_calibration();
  c.attention_shapes.push_back(
      {64, 4, 9e-6, 0.2e-6, 2.7e12});  // llama3.2-1b's shape; paper-mha16 is head dim 128, group 1
  CHECK(model::join_reasons(reasons(&c, model::DecodeAlgorithm::tree, 4000)) ==
        "attention of head dim 128, group 1 not measured by shape (the HBM efficiency's line)");
  c.attention_shapes.push_back({128, 1, 10e-6, 0.0, 2.67e12});
  CHECK(reasons(&c, model::DecodeAlgorithm::tree, 4000).empty());
}

TEST_CASE("collectives over more ranks than measured") {
  const topologies::Calibration c = measured_calibration();
  CHECK(model::join_reasons(reasons(&c, model::DecodeAlgorithm::tree, 8000, 4)) ==
        "collectives over 4 ranks outside the measured 2-2");
}

TEST_CASE("an uncalibrated cluster lists nothing (it is nominal throughout, and says so elsewhere)") {
  CHECK(reasons(nullptr, model::DecodeAlgorithm::ring, 8000).empty());
}

TEST_CASE("the sizes a plan uses, to measure them") {
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(spec, {1, std::nullopt});
  const topologies::Topology topology(spec);
  const model::DecodeModel decode(topology, {0, 1});
  const model::Workload& w = model::find_workload("paper-mha16");
  model::PlanMeasures m;
  model::add_measures(decode.plan(model::DecodeAlgorithm::tree, w, 8000), m);
  model::add_measures(decode.plan(model::DecodeAlgorithm::ring, w, 8001), m);
  // Tree: shards of 4,000; all-reduces of the 16 fp32 maxima and denominators (64 B) and of o (16 x 128 x 2 B).
  // Ring at 8,001: blocks of 4,001 and 4,000 tokens x 8,192 B.
  CHECK(m.tokens == std::set<long long>{4000, 4001});
  CHECK(m.send_bytes == std::set<double>{4000.0 * 8192, 4001.0 * 8192});
  CHECK(m.collective_bytes.at(model::CollectiveOp::allreduce) == std::set<double>{64, 4096});
}
