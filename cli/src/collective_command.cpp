// treering collective: the collective model's prediction for one operation over sizes, like nccl-tests.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "table.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/model/collectives.hpp"
#include "treering/model/uncertainty.hpp"
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

// A collective's prediction with its band: the calibration's error when the cluster is calibrated (doubled outside
// what it measured), else the collective model's validation (the default profile's communication error).
struct BandedEstimate {
  model::CollectiveEstimate estimate;
  model::Band band;
  model::RelativeErrors errors;
};

ordered_json bound_json(double seconds) { return std::isfinite(seconds) ? ordered_json(seconds) : ordered_json(); }

ordered_json estimate_json(const BandedEstimate& banded, const model::CommGroup& group) {
  const model::CollectiveEstimate& estimate = banded.estimate;
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
          {"time_s_low", bound_json(banded.band.low_s)},
          {"time_s_high", bound_json(banded.band.high_s)},
          {"algorithm", model::to_string(estimate.chosen.algorithm)},
          {"protocol", model::to_string(estimate.chosen.protocol)},
          {"breakdown", {{"latency_s", estimate.chosen.latency_s}, {"transfer_s", estimate.chosen.transfer_s}}},
          {"algbw_Bps", estimate.algorithm_bandwidth_Bps},
          {"busbw_Bps", estimate.bus_bandwidth_Bps},
          {"scale_up_bytes_per_gpu", estimate.scale_up_bytes_per_gpu},
          {"scale_out_bytes_per_gpu", estimate.scale_out_bytes_per_gpu},
          {"candidates", candidates}};
}

void print_table(const std::vector<BandedEstimate>& estimates, const model::CommGroup& group, const CollectiveArgs& args) {
  std::cout << args.op << " over " << group.ranks << " GPUs in " << group.domains << " scale-up domain(s) of "
            << args.cluster.cluster << " (model, NCCL 2.30.7 latency constants)\n";
  if (!estimates.empty()) {
    std::vector<double> told;  // each error once, named by the first size that has it
    for (const auto* e = estimates.data(); e != estimates.data() + estimates.size(); ++e) {
      if (std::find(told.begin(), told.end(), e->errors.communication) != told.end()) continue;
      told.push_back(e->errors.communication);
      char error[32];
      std::snprintf(error, sizeof error, "%.1f %%", 100 * e->errors.communication);
      std::cout << "band" << (estimates.size() > 1 ? std::string(" (") + topologies::format_bytes(e->estimate.bytes) + ")" : std::string())
                << ": +-" << error << " (" << e->errors.source << ")\n";
    }
  }
  std::cout << '\n';
  Table table({"bytes", "time", "band", "algbw", "busbw", "algorithm", "protocol", "latency", "transfer"});
  for (const auto& [estimate, band, errors] : estimates) {
    char bytes[32];
    std::snprintf(bytes, sizeof bytes, "%.0f", estimate.bytes);
    const std::string high = std::isfinite(band.high_s) ? topologies::format_duration(band.high_s) : "unbounded";
    table.add_row({bytes, topologies::format_duration(estimate.chosen.time_s), topologies::format_duration(band.low_s) + " - " + high,
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
  std::vector<BandedEstimate> estimates;
  for (double bytes : topologies::parse_message_sizes(args.bytes)) {
    request.bytes = bytes;
    bool extrapolated = false;
    if (const auto& calibration = topology.spec().calibration) {
      const std::string why = validate::extrapolation(*calibration, bytes, group.ranks);
      if (!why.empty()) std::cerr << "warning: extrapolating: " << why << '\n';
      extrapolated = !why.empty();
    }
    const model::CollectiveEstimate estimate = model::estimate_collective(group, request);
    model::RelativeErrors errors = model::prediction_errors(topology, topologies::default_impl_profile(), extrapolated);
    if (!topology.spec().calibration) errors.source = "the uncalibrated collective model's worst |error| on the public 2-node H100 nccl-tests set";
    // Across domains at a latency-bound size: the error the public multi-node runs show there (network_latency).
    const bool network_latency = group.domains > 1 && estimate.chosen.latency_s >= estimate.chosen.transfer_s;
    if (network_latency && errors.network_latency != errors.communication) {
      errors.communication = errors.network_latency;
      if (!topology.spec().calibration) errors.source = "the uncalibrated model's worst |error| at <= 64 KiB across nodes on public multi-node nccl-tests runs";
    }
    estimates.push_back({estimate, model::band_of(0.0, estimate.chosen.time_s, errors), errors});
  }
  if (args.format == "table") return print_table(estimates, group, args);
  ordered_json list = ordered_json::array();
  for (const auto& estimate : estimates) list.push_back(estimate_json(estimate, group));
  std::cout << list.dump(2) << '\n';  // an array for one size as for several
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto* command = app.add_subcommand("collective", "Predict a collective's time on a cluster (like nccl-tests)");
  auto args = std::make_shared<CollectiveArgs>();
  add_cluster_option(*command, args->cluster);
  command->add_option("--op", args->op, "allreduce, allgather, reducescatter, broadcast, sendrecv or alltoall (--bytes: each rank's send buffer, S / n per peer)")
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
