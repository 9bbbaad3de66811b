#include "treering/analysis/collective_report.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "treering/topologies/units.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::analysis {

using nlohmann::ordered_json;

namespace {

// send/recv without --gpus: GPU 0 and the first GPU of the next scale-up domain (or GPU 1 in one domain).
std::vector<int> default_pair(const topologies::Topology& topology) {
  if (topology.gpu_count() < 2) throw topologies::InputError("send/recv needs two GPUs; the cluster has one");
  for (int gpu = 1; gpu < topology.gpu_count(); ++gpu) {
    if (topology.domain_of_gpu(gpu) != topology.domain_of_gpu(0)) return {0, gpu};
  }
  return {0, std::min(1, topology.gpu_count() - 1)};
}

ordered_json bound_json(double seconds) { return std::isfinite(seconds) ? ordered_json(seconds) : ordered_json(); }

}  // namespace

std::string nccl_constants(const model::CommGroup& group) {
  const std::string version =
      "NCCL " + topologies::to_string(group.nccl_version) + (group.nccl_version.given ? "" : " (the default release)");
  return group.domains > 1 ? version + " constants for " + model::describe(group.nccl.rows, group.nccl_version)
                           : version + " latency constants";
}

ordered_json estimate_json(const BandedEstimate& banded, const model::CommGroup& group) {
  const model::CollectiveEstimate& estimate = banded.estimate;
  ordered_json candidates = ordered_json::array();
  for (const auto& candidate : estimate.candidates) {
    candidates.push_back({{"algorithm", model::to_string(candidate.algorithm)},
                          {"protocol", model::to_string(candidate.protocol)},
                          {"time_s", candidate.time_s}});
  }
  ordered_json json = {
      {"op", model::to_string(estimate.op)},
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
      {"candidates", candidates},
      {"nccl_constants", nccl_constants(group)}};
  if (banded.simulated) add_simulated_json(json, *banded.simulated);
  return json;
}

void add_simulated_json(ordered_json& json, const sim::SimulatedCollective& simulated) {
  json["simulated_time_s"] = simulated.time_s;
  json["simulated_flows"] = simulated.flows;
  json["busiest_link_utilisation"] = simulated.busiest_utilisation;
  json["simulator"] = simulated.engine;
}

CollectiveReport collective_report(const topologies::Topology& topology, const CollectiveChoice& choice) {
  model::CollectiveRequest request;
  request.op = model::parse_collective_op(choice.op);
  if (!choice.algorithm.empty()) request.algorithm = model::parse_collective_algorithm(choice.algorithm);
  if (!choice.protocol.empty()) request.protocol = model::parse_protocol(choice.protocol);
  if (choice.algorithms != "nccl" && choice.algorithms != "all") {
    throw topologies::InputError("algorithms: nccl or all, not " + choice.algorithms);
  }
  request.allowed = choice.algorithms == "all" ? model::AlgorithmSet::all : model::AlgorithmSet::nccl;
  std::vector<int> gpus = choice.gpus;
  if (gpus.empty() && request.op == model::CollectiveOp::sendrecv) gpus = default_pair(topology);
  const bool simulate =
      std::find(choice.engines.begin(), choice.engines.end(), validate::Engine::sim) != choice.engines.end();
  CollectiveReport report{model::describe_group(topology, gpus), {}, {}};
  const model::CommGroup& group = report.group;
  for (double bytes : topologies::parse_message_sizes(choice.bytes)) {
    request.bytes = bytes;
    bool extrapolated = false;
    if (const auto& calibration = topology.spec().calibration) {
      const std::string why = validate::extrapolation(*calibration, bytes, group.ranks);
      if (!why.empty()) report.warnings.push_back("extrapolating: " + why);
      extrapolated = !why.empty();
    }
    const model::CollectiveEstimate estimate = model::estimate_collective(group, request);
    model::RelativeErrors errors = model::prediction_errors(topology, topologies::default_impl_profile(), extrapolated);
    if (errors.host_staged) {
      errors.source = "GPUs meet in host memory: the uncalibrated model's worst |error| on public runs of such boxes";
    } else if (!topology.spec().calibration) {
      errors.source = "the uncalibrated collective model's worst |error| on the public 2-node H100 nccl-tests set";
    }
    // Across domains at a latency-bound size: the error the public multi-node runs show there (network_latency).
    const bool network_latency = group.domains > 1 && estimate.chosen.latency_s >= estimate.chosen.transfer_s;
    if (network_latency && errors.network_latency != errors.communication) {
      errors.communication = errors.network_latency;
      if (!topology.spec().calibration)
        errors.source =
            "the uncalibrated model's worst |error| at <= 64 KiB across nodes on public multi-node nccl-tests runs";
    }
    if (model::reduces_in_network(estimate.chosen.algorithm, group.domains)) {
      errors.source += "; reduced in the network (SHARP): NCCL's constants, not checked against a measurement";
    }
    report.estimates.push_back({estimate, model::band_of(0.0, estimate.chosen.time_s, errors), errors, std::nullopt});
    if (simulate) {
      sim::ReplayOptions options;
      options.in_simgrid = choice.in_simgrid;
      report.estimates.back().simulated =
          sim::simulate_collective(topology, group, request.op, bytes, estimate.chosen, options);
    }
  }
  return report;
}

}  // namespace treering::analysis
