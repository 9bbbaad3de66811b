// treering collective: the collective model's prediction for one operation over sizes, like nccl-tests.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "table.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/model/collectives.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;

struct CollectiveArgs {
  ClusterArgs cluster;
  std::string op = "allreduce";
  std::string bytes;
  std::vector<int> gpus;
  std::string algorithm;
  std::string protocol;
  std::string algorithms = "nccl";
  std::string format = "table";
};

// send/recv without --gpus: GPU 0 and the first GPU of the next scale-up domain (or GPU 1 in one domain).
std::vector<int> default_pair(const topologies::Topology& topology) {
  if (topology.gpu_count() < 2) throw std::invalid_argument("send/recv needs two GPUs; the cluster has one");
  for (int gpu = 1; gpu < topology.gpu_count(); ++gpu) {
    if (topology.domain_of_gpu(gpu) != topology.domain_of_gpu(0)) return {0, gpu};
  }
  return {0, std::min(1, topology.gpu_count() - 1)};
}

ordered_json estimate_json(const model::CollectiveEstimate& estimate, const model::CommGroup& group) {
  ordered_json candidates = ordered_json::array();
  for (const auto& candidate : estimate.candidates) {
    candidates.push_back({{"algorithm", model::to_string(candidate.algorithm)},
                          {"protocol", model::to_string(candidate.protocol)},
                          {"time_s", candidate.time_s}});
  }
  return {{"op", model::to_string(estimate.op)},
          {"bytes", estimate.bytes},
          {"gpus", group.ranks},
          {"domains", group.domains},
          {"time_s", estimate.chosen.time_s},
          {"algorithm", model::to_string(estimate.chosen.algorithm)},
          {"protocol", model::to_string(estimate.chosen.protocol)},
          {"breakdown", {{"latency_s", estimate.chosen.latency_s}, {"transfer_s", estimate.chosen.transfer_s}}},
          {"algbw_Bps", estimate.algorithm_bandwidth_Bps},
          {"busbw_Bps", estimate.bus_bandwidth_Bps},
          {"scale_up_bytes_per_gpu", estimate.scale_up_bytes_per_gpu},
          {"scale_out_bytes_per_gpu", estimate.scale_out_bytes_per_gpu},
          {"candidates", candidates}};
}

void print_table(const std::vector<model::CollectiveEstimate>& estimates, const model::CommGroup& group,
                 const CollectiveArgs& args) {
  std::cout << args.op << " over " << group.ranks << " GPUs in " << group.domains << " scale-up domain(s) of "
            << args.cluster.cluster << " (model, NCCL 2.30.7 latency constants)\n\n";
  Table table({"bytes", "time", "algbw", "busbw", "algorithm", "protocol", "latency", "transfer"});
  for (const auto& estimate : estimates) {
    char bytes[32];
    std::snprintf(bytes, sizeof bytes, "%.0f", estimate.bytes);
    table.add_row({bytes, topologies::format_duration(estimate.chosen.time_s),
                   topologies::format_bandwidth(estimate.algorithm_bandwidth_Bps),
                   topologies::format_bandwidth(estimate.bus_bandwidth_Bps),
                   model::to_string(estimate.chosen.algorithm), model::to_string(estimate.chosen.protocol),
                   topologies::format_duration(estimate.chosen.latency_s),
                   topologies::format_duration(estimate.chosen.transfer_s)});
  }
  table.print(std::cout);
}

void run(const CollectiveArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  model::CollectiveRequest request;
  request.op = model::parse_collective_op(args.op);
  if (!args.algorithm.empty()) request.algorithm = model::parse_collective_algorithm(args.algorithm);
  if (!args.protocol.empty()) request.protocol = model::parse_protocol(args.protocol);
  request.allowed = args.algorithms == "all" ? model::AlgorithmSet::all : model::AlgorithmSet::nccl;
  std::vector<int> gpus = args.gpus;
  if (gpus.empty() && request.op == model::CollectiveOp::sendrecv) gpus = default_pair(topology);
  const model::CommGroup group = model::describe_group(topology, gpus);
  std::vector<model::CollectiveEstimate> estimates;
  for (double bytes : topologies::parse_message_sizes(args.bytes)) {
    request.bytes = bytes;
    estimates.push_back(model::estimate_collective(group, request));
    if (const auto& calibration = topology.spec().calibration) {
      const std::string why = validate::extrapolation(*calibration, bytes, group.ranks);
      if (!why.empty()) std::cerr << "warning: extrapolating: " << why << '\n';
    }
  }
  if (args.format == "table") return print_table(estimates, group, args);
  ordered_json list = ordered_json::array();
  for (const auto& estimate : estimates) list.push_back(estimate_json(estimate, group));
  std::cout << (list.size() == 1 ? list.front() : list).dump(2) << '\n';
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto* command = app.add_subcommand("collective", "Predict a collective's time on a cluster (like nccl-tests)");
  auto args = std::make_shared<CollectiveArgs>();
  add_cluster_option(*command, args->cluster);
  command->add_option("--op", args->op, "allreduce, allgather, reducescatter, broadcast or sendrecv")
      ->capture_default_str();
  command->add_option("--bytes", args->bytes, "Sizes: 8K, 1G, lists 8,1M and ranges 8:1G (doubling) or 8:1G:x4")
      ->required();
  command->add_option("--gpus", args->gpus, "The group's GPUs, e.g. 0,8 (default: all; sendrecv: 0 and the next domain's first)")
      ->delimiter(',');
  command->add_option("--algo", args->algorithm, "Force an algorithm: ring, tree, nvls, nvls-tree, hierarchical, "
                                                  "recursive-doubling, p2p");
  command->add_option("--protocol", args->protocol, "Force a protocol: LL, LL128, Simple");
  command->add_option("--algorithms", args->algorithms, "Pick from NCCL's algorithms or all that the model knows")
      ->check(CLI::IsMember({"nccl", "all"}))
      ->capture_default_str();
  add_format_option(*command, args->format, {"table", "json"});
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
