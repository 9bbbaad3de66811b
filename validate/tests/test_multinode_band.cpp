// The efficient profile's network_latency error is what the public multi-node runs say it is: the model's worst
// |error| at <= 64 KiB over validate/data/nccl-multinode and the 2-node H100 set, rounded up to the next
// hundredth (topologies/impls/efficient.yaml). If the model moves, this test says the band must move with it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/measurements.hpp"
#include "treering/validate/report.hpp"

using namespace treering;

namespace {

const std::string kData = std::string(TREERING_SOURCE_DIR) + "/validate/data/";

double worst_small(const topologies::Topology& topology, const std::string& file) {
  double worst = 0;
  for (const validate::CaseResult& c :
       validate::predict_cases(topology, validate::read_collective_measurements(file), {validate::Engine::model})) {
    if (c.measured.bytes <= 65536) worst = std::max(worst, std::abs(c.error(validate::Engine::model)));
  }
  return worst;
}

}  // namespace

TEST_CASE("network_latency = the worst small-message error across nodes on the public data, rounded up") {
  const topologies::Topology a4 = topologies::build_topology(kData + "nccl-multinode/gcp-a4-b200.yaml", {});
  const topologies::Topology a100 = topologies::build_topology("dgx-a100", {2, 1});
  const topologies::Topology h100 = topologies::build_topology("dgx-h100", {2, {}});
  double worst = 0;
  for (const char* run : {"allgather-b200-2node-roce-gcp-a4.log", "allgather-b200-2node-roce-gcp-a4high.log",
                          "allgather-b200-2node-roce-verl-on-gke.log"}) {
    worst = std::max(worst, worst_small(a4, kData + "nccl-multinode/" + run));
  }
  worst = std::max(worst, worst_small(a100, kData + "nccl-multinode/allreduce-a100-2x1-hdr-nccl-tests-150.log"));
  worst = std::max(worst, worst_small(h100, kData + "nccl-tests-allreduce-h100-2node-ndr.log"));
  // Send/recv and all-to-all across nodes: B200 on InfiniBand (37.5 % at 64 KiB), A100 PCIe hosts (35.4 %).
  const topologies::Topology together = topologies::build_topology(kData + "nccl-multinode/together-b200-ib.yaml", {});
  worst = std::max(worst, worst_small(together, kData + "nccl-multinode/sendrecv-b200-2node-ib-together.log"));
  const topologies::Topology pcie_hosts =
      topologies::build_topology(kData + "nccl-multinode/a100-pcie-1gpu-hdr.yaml", {});
  for (const char* run : {"alltoall-a100pcie-2x1-ib-thomaslie210.log", "sendrecv-a100pcie-2x1-ib-thomaslie210.log"}) {
    worst = std::max(worst, worst_small(pcie_hosts, kData + "nccl-multinode/" + run));
  }
  CHECK(worst == doctest::Approx(0.451).scale(1e-12).epsilon(0.01));  // 2 KiB on GCP A4 High: 30.4 us against 55.3 us
  CHECK(topologies::default_impl_profile().uncertainty.network_latency == std::ceil(worst * 100) / 100);
}
