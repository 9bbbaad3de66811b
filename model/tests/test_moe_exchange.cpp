// MoE dispatch and combine on DGX H100 nodes (one 400 Gb/s NIC a GPU, NVSwitch 450 GB/s a direction), by hand.
#include <doctest/doctest.h>

#include "treering/model/collectives.hpp"
#include "treering/model/moe_exchange.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using namespace treering::model;

namespace {

struct Cluster {
  topologies::Topology topology;
  CommGroup group;
  explicit Cluster(int nodes) : topology(topologies::build_topology("dgx-h100", {nodes, {}})) {
    group = describe_group(topology);
  }
};

MoeExchange exchange(const Cluster& c, EpKernel kernel, MoeOp op = MoeOp::dispatch, int tokens = 128) {
  MoeExchangeRequest request;
  request.op = op;
  request.kernel = kernel;
  request.tokens_per_gpu = tokens;
  return estimate_moe_exchange(c.topology, c.group, find_workload("deepseek-v3"), request);
}

}  // namespace

TEST_CASE("message bytes: fp8 dispatch with its scales (and the low-latency header), bf16 combine") {
  const Cluster one(1);
  // 7,168 fp8 values + 7,168 / 128 = 56 float scales (224 B) + the 16-byte header = 7,408 B
  CHECK(exchange(one, EpKernel::low_latency).message_bytes == doctest::Approx(7408).scale(1e-12));
  CHECK(exchange(one, EpKernel::normal).message_bytes == doctest::Approx(7392).scale(1e-12));
  CHECK(exchange(one, EpKernel::low_latency, MoeOp::combine).message_bytes ==
        doctest::Approx(14336).scale(1e-12));  // 2 x 7,168
  MoeExchangeRequest bf16;
  bf16.dtype = "bf16";
  CHECK(estimate_moe_exchange(one.topology, one.group, find_workload("deepseek-v3"), bf16).message_bytes ==
        doctest::Approx(14336).scale(1e-12));
  bf16.dtype = "fp4";
  CHECK_THROWS_AS(estimate_moe_exchange(one.topology, one.group, find_workload("deepseek-v3"), bf16),
                  topologies::InputError);
}

TEST_CASE("low-latency: every copy leaves through the NIC, node-local ones too; normal: none inside a node") {
  const Cluster one(1);  // EP 8 in one node
  const MoeExchange ll = exchange(one, EpKernel::low_latency);
  // 128 tokens x 8 copies x 7,408 B = 7,585,792 B through the NIC, nothing over NVLink
  CHECK(ll.messages_per_gpu == doctest::Approx(1024).scale(1e-12));
  CHECK(ll.nic_bytes_per_gpu == doctest::Approx(7585792).scale(1e-12));
  CHECK(ll.nvlink_bytes_per_gpu == 0);
  // the GPU's NIC: 400 Gb/s = 50 GB/s x 0.92 = 46 GB/s; the busiest GPU receives busiest_factor x the mean
  CHECK(ll.nic_Bps == doctest::Approx(46e9).scale(1e-12));
  CHECK(ll.transfer_s == doctest::Approx(7585792 * ll.routing.busiest_factor / 46e9).scale(1e-12));
  const MoeExchange normal = exchange(one, EpKernel::normal);
  // one node: no NIC bytes; NVLink: 128 x 3.62901 GPUs a token (group-limited, expert_routing) x 7/8 x 7,392 B
  CHECK(normal.nic_bytes_per_gpu == 0);
  CHECK(normal.nvlink_bytes_per_gpu == doctest::Approx(128 * 3.629011 * 7.0 / 8 * 7392).epsilon(1e-6).scale(1e-12));
  CHECK(normal.bound == "NVLink");
}

TEST_CASE("normal across nodes: one RDMA write per destination node, then NVLink forwarding") {
  const Cluster eight(8);  // EP 64: a node holds one expert group, 3.62901 nodes a token (expert_routing)
  const MoeExchange normal = exchange(eight, EpKernel::normal);
  // remote nodes a token reaches: 7 x 0.453626 = 3.17538; NIC bytes 128 x 3.17538 x 7,392 B
  CHECK(normal.nic_bytes_per_gpu == doctest::Approx(128 * 7 * 0.4536264 * 7392).epsilon(1e-6).scale(1e-12));
  // NVLink: 7.35937 GPUs a token x 7/8
  CHECK(normal.nvlink_bytes_per_gpu == doctest::Approx(128 * 7.359370 * 7.0 / 8 * 7392).epsilon(1e-6).scale(1e-12));
  CHECK(normal.bound == "NIC");
  const MoeExchange ll = exchange(eight, EpKernel::low_latency);
  CHECK(ll.nic_bytes_per_gpu > 2 * normal.nic_bytes_per_gpu);  // 8 copies against 3.2 nodes
  // combine: bf16, the same copies back
  const MoeExchange back = exchange(eight, EpKernel::low_latency, MoeOp::combine);
  CHECK(back.nic_bytes_per_gpu == doctest::Approx(128 * 8 * 14336.0).scale(1e-12));
}

TEST_CASE("nccl: an all-to-all whose buffers are padded to the busiest receiver") {
  const Cluster two(2);
  const MoeExchange nccl = exchange(two, EpKernel::nccl);
  const double sent = 128 * 8 * 7392.0;  // no header
  CHECK(nccl.busiest_bytes == doctest::Approx(sent * nccl.routing.busiest_factor).scale(1e-12));
  CHECK(nccl.nic_bytes_per_gpu == doctest::Approx(sent * 8 / 16).scale(1e-12));     // (n - g) / n
  CHECK(nccl.nvlink_bytes_per_gpu == doctest::Approx(sent * 7 / 16).scale(1e-12));  // (g - 1) / n
  CollectiveRequest request;
  request.op = CollectiveOp::alltoall;
  request.bytes = nccl.busiest_bytes;
  CHECK(nccl.time_s == doctest::Approx(estimate_collective(two.group, request).chosen.time_s).scale(1e-12));
}

TEST_CASE("exchange flows: the low-latency kernel's to itself and its node go through NICs") {
  const Cluster one(1);
  const MoeExchange ll = exchange(one, EpKernel::low_latency);
  const std::vector<int> domains(8, 0);
  const std::vector<MoeFlow> flows = moe_exchange_flows(domains, ll);
  CHECK(flows.size() == 64);  // 8 x 8, itself included
  double into_busiest = 0, total = 0;
  for (const MoeFlow& flow : flows) {
    CHECK(flow.through_nics);
    total += flow.bytes;
    if (flow.to == 0) into_busiest += flow.bytes;
  }
  CHECK(into_busiest == doctest::Approx(ll.busiest_bytes).scale(1e-12));
  CHECK(total == doctest::Approx(7 * ll.nic_bytes_per_gpu + ll.busiest_bytes).scale(1e-12));
  // normal on 2 nodes: to the same local GPU of the other node, and to the 7 others of its own
  const Cluster two(2);
  const MoeExchange normal = exchange(two, EpKernel::normal);
  std::vector<int> two_domains(16, 0);
  for (int r = 8; r < 16; ++r) two_domains[static_cast<size_t>(r)] = 1;
  int remote = 0;
  for (const MoeFlow& flow : moe_exchange_flows(two_domains, normal)) {
    CHECK_FALSE(flow.through_nics);
    if ((flow.from < 8) != (flow.to < 8)) {
      ++remote;
      CHECK(flow.to % 8 == flow.from % 8);
    }
  }
  CHECK(remote == 16);
}

TEST_CASE("GPUs sharing a NIC share its rate; nodes without NICs cannot run the low-latency kernel") {
  const topologies::Topology pcie = topologies::build_topology("rtx4090-pcie", {1, {}});
  const Workload w = find_workload("deepseek-v2-lite");  // 64 experts, top-6: 8 a GPU
  MoeExchangeRequest request;
  // one 100 Gb/s NIC for 8 GPUs: 12.5 GB/s x 0.92 / 8 = 1.4375 GB/s each
  CHECK(estimate_moe_exchange(pcie, describe_group(pcie), w, request).nic_Bps ==
        doctest::Approx(1.4375e9).scale(1e-12));
  const topologies::Topology bare(topologies::load_cluster_text(
      "name: bare\ngpu_models:\n  G: {hbm_bandwidth: 2TB/s, hbm_capacity: 80GB, peak_fp16: 1000TFLOPS, "
      "launch_overhead: 2us}\nnodes:\n  - name: box\n    count: 1\n    gpu: G\n    gpus_per_node: 4\n"
      "    fabric: {type: nvswitch, bandwidth: 100GB/s, latency: 1us}\n",
      "bare.yaml"));
  CHECK_THROWS_WITH_AS(estimate_moe_exchange(bare, describe_group(bare), w, request), doctest::Contains("NICs"),
                       topologies::InputError);
  request.kernel = EpKernel::normal;  // NVLink alone inside one node
  CHECK(estimate_moe_exchange(bare, describe_group(bare), w, request).nic_bytes_per_gpu == 0);
}
