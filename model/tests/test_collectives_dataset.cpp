// The shipped public measurement (validate/data/nccl-tests-allreduce-h100-2node-ndr.csv: 2 x 8 H100, NDR,
// NCCL 2.26.2) predicted from the dgx-h100 preset without any fitting.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "treering/model/collectives.hpp"
#include "treering/topologies/load.hpp"
#include "treering/model/statistics.hpp"

using namespace treering;

namespace {

struct Measured {
  double bytes;
  double time_s;
};

// Each row: bytes, out-of-place us, algbw, busbw, in-place us. The better of the two times is taken: the
// out-of-place column has warm-up outliers (68.5 us at 8 B, 94.4 us at 256 B).
std::vector<Measured> read_dataset() {
  std::ifstream in(std::string(TREERING_SOURCE_DIR) + "/validate/data/nccl-tests-allreduce-h100-2node-ndr.csv");
  REQUIRE(in);
  std::vector<Measured> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    double bytes, out_of_place_us, algbw, busbw, in_place_us;
    fields >> bytes >> out_of_place_us >> algbw >> busbw >> in_place_us;
    rows.push_back({bytes, std::min(out_of_place_us, in_place_us) * 1e-6});
  }
  return rows;
}

model::CollectiveRequest request(double bytes) {
  model::CollectiveRequest all_reduce;
  all_reduce.bytes = bytes;
  return all_reduce;
}

using treering::model::median;

}  // namespace

TEST_CASE("2-node H100 all-reduce: predicted from the preset against nccl-tests") {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {2, std::nullopt});
  const topologies::Topology topology(spec);
  const model::CommGroup group = model::describe_group(topology);
  std::vector<double> small, middle, large, all;
  for (const Measured& row : read_dataset()) {
    const model::CollectiveEstimate estimate = model::estimate_collective(group, request(row.bytes));
    const double error = std::fabs(estimate.chosen.time_s - row.time_s) / row.time_s;
    MESSAGE(row.bytes << " B: measured " << row.time_s * 1e6 << " us, predicted " << estimate.chosen.time_s * 1e6
                      << " us (" << std::string(model::to_string(estimate.chosen.algorithm)) << "/"
                      << std::string(model::to_string(estimate.chosen.protocol)) << "), error " << error * 100 << " %");
    (row.bytes <= 65536 ? small : row.bytes < 64e6 ? middle : large).push_back(error);
    all.push_back(error);
  }
  REQUIRE(all.size() == 32);
  MESSAGE("median |error|: <=64 KiB " << median(small) << ", 128 KiB-32 MiB " << median(middle) << ", >=64 MiB "
                                      << median(large) << ", all " << median(all));
  // Achieved without fitting (README "Accuracy"; medians by nearest rank, model/statistics.hpp, as every median in
  // the project): latency-bound sizes 1.9 %,
  // 128 KiB-32 MiB 10.0 % (NCCL's protocol caps, tree correction and channel narrowing; NVLS-tree's chunk
  // pipeline fill), from 64 MiB 5.9 %; 5.2 % over all 32 sizes, 23 % at worst (512 KiB, where tree/LL128 is
  // predicted at 54 us against 70 us measured). The bounds leave some headroom; the middle one is the issue's.
  CHECK(median(small) < 0.04);
  CHECK(median(middle) < 0.15);
  CHECK(median(large) < 0.08);
  CHECK(median(all) < 0.07);
  CHECK(*std::max_element(all.begin(), all.end()) < 0.26);
}
