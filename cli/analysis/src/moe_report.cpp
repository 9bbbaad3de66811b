// moe_exchange_report (moe_report.hpp).
#include "treering/analysis/moe_report.hpp"

#include "treering/analysis/collective_report.hpp"

#include <algorithm>
#include <cmath>

#include "treering/analysis/workload_files.hpp"
#include "treering/sim/moe_replay.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"
#include <cstdio>

namespace treering::analysis {
namespace {

using nlohmann::ordered_json;

// How far the kernel models are from published measurements (validate/data/moe-dispatch: the model against
// DeepEP's own tables on H800 nodes, tested in validate/tests/test_moe_published.cpp); NCCL's all-to-all takes the
// collective model's error across nodes at latency-bound sizes.
model::RelativeErrors kernel_errors(const topologies::Topology& topology, model::EpKernel kernel) {
  model::RelativeErrors errors;
  switch (kernel) {
    case model::EpKernel::low_latency:
      errors.communication = 0.10;
      errors.source =
          "the low-latency model's worst |error|, 8.6 %, against DeepEP's published EP 8-256 table (H800, CX7)";
      break;
    case model::EpKernel::normal:
      errors.communication = 0.25;
      errors.source =
          "the normal model's worst |error|, 21 %, against DeepEP's published normal-kernel table (H800, CX7)";
      break;
    case model::EpKernel::nccl:
      errors = model::prediction_errors(topology, topologies::default_impl_profile(), false);
      errors.communication = std::max(errors.communication, errors.network_latency);
      errors.source = "the collective model's worst |error| across nodes at latency-bound sizes (public nccl-tests)";
      break;
  }
  return errors;
}

ordered_json bound_json(double seconds) { return std::isfinite(seconds) ? ordered_json(seconds) : ordered_json(); }

}  // namespace

bool is_moe_op(const std::string& op) { return op == "moe-dispatch" || op == "moe-combine"; }

std::string describe(model::EpKernel kernel) {
  switch (kernel) {
    case model::EpKernel::low_latency:
      return "DeepEP-style low-latency kernel: a GPU-initiated RDMA write per (token, expert), every one through "
             "the NICs";
    case model::EpKernel::normal:
      return "DeepEP-style normal kernel: one RDMA write per destination node on the sender's rail, NVLink "
             "forwarding inside nodes, a host-side notify first";
    case model::EpKernel::nccl: return "ncclAllToAll, every rank's buffer padded to the busiest receiver's";
  }
  return "";
}

MoeExchangeReport moe_exchange_report(const topologies::Topology& topology, const MoeExchangeChoice& choice) {
  if (!is_moe_op(choice.op)) throw topologies::InputError("not an MoE exchange: " + choice.op);
  if (choice.workload.empty()) throw topologies::InputError(choice.op + " needs --workload (an MoE model)");
  const model::Workload workload = load_workload(choice.workload);
  MoeExchangeReport report;
  report.group = model::describe_group(topology, choice.gpus);
  report.workload = workload.name;
  model::MoeExchangeRequest request;
  request.op = choice.op == "moe-dispatch" ? model::MoeOp::dispatch : model::MoeOp::combine;
  request.kernel = model::parse_ep_kernel(choice.kernel);
  request.dtype = choice.dtype;
  request.redundant_experts = choice.redundant_experts;
  request.skew = choice.skew;
  report.errors = kernel_errors(topology, request.kernel);
  const bool simulate =
      std::find(choice.engines.begin(), choice.engines.end(), validate::Engine::sim) != choice.engines.end();
  for (int batch : choice.batches) {
    if (batch < 0) throw topologies::InputError("--batch (tokens per GPU) must be at least 0");
    request.tokens_per_gpu = batch;
    MoeExchangeEstimate estimate;
    estimate.exchange = model::estimate_moe_exchange(topology, report.group, workload, request);
    estimate.band = model::band_of(0.0, estimate.exchange.time_s, report.errors);
    if (simulate) estimate.simulated = sim::simulate_moe_exchange(topology, report.group, estimate.exchange);
    report.estimates.push_back(std::move(estimate));
  }
  return report;
}

ordered_json exchange_json(const model::MoeExchange& x) {
  const model::ExpertRouting& r = x.routing;
  return {{"op", model::to_string(x.op)},
          {"kernel", model::to_string(x.kernel)},
          {"ep", r.ep},
          {"nodes", r.nodes},
          {"tokens_per_gpu", static_cast<long long>(r.tokens_per_gpu)},
          {"dtype", x.dtype},
          {"message_bytes", x.message_bytes},
          {"time_s", x.time_s},
          {"latency_s", x.latency_s},
          {"transfer_s", x.transfer_s},
          {"bound", x.bound},
          {"messages_per_gpu", x.messages_per_gpu},
          {"nic_bytes_per_gpu", x.nic_bytes_per_gpu},
          {"nvlink_bytes_per_gpu", x.nvlink_bytes_per_gpu},
          {"busiest_bytes", x.busiest_bytes},
          {"gpus_per_token", r.gpus_per_token},
          {"nodes_per_token", r.nodes_per_token},
          {"busiest_factor", r.busiest_factor},
          {"group_limited_routing", r.group_limited}};
}

ordered_json moe_estimate_json(const MoeExchangeEstimate& estimate, const MoeExchangeReport& report) {
  ordered_json json = exchange_json(estimate.exchange);
  json["workload"] = report.workload;
  json["time_s_low"] = bound_json(estimate.band.low_s);
  json["time_s_high"] = bound_json(estimate.band.high_s);
  json["band_source"] = report.errors.source;
  if (estimate.simulated) add_simulated_json(json, *estimate.simulated);
  return json;
}

ordered_json expert_step_json(const model::ExpertStep& e) {
  return {{"tokens_per_gpu", e.tokens_per_gpu},
          {"micro_batches", e.micro_batches},
          {"moe_layers", e.moe_layers},
          {"compute_s", e.compute_s},
          {"exchange_s", e.exchange_s},
          {"experts_mlp_s", e.experts_mlp_s},
          {"dispatch", exchange_json(e.dispatch)},
          {"combine", exchange_json(e.combine)}};
}

std::string expert_step_line(const model::StepResult& step) {
  if (!step.experts) return "";
  const model::ExpertStep& e = *step.experts;
  const model::ExpertRouting& r = e.dispatch.routing;
  char line[512];
  std::snprintf(line, sizeof line,
                "experts: EP %d over %d node(s), %s kernel, %d token(s) a GPU a layer%s: dispatch %s + combine %s "
                "(%.2f GPUs, %.2f nodes a token; busiest GPU x%.3f), experts %s a MoE layer%s",
                r.ep, r.nodes, model::to_string(e.dispatch.kernel), e.tokens_per_gpu,
                e.micro_batches > 1 ? (" in " + std::to_string(e.micro_batches) + " micro-batches").c_str() : "",
                topologies::format_duration(e.dispatch.time_s).c_str(),
                topologies::format_duration(e.combine.time_s).c_str(), r.gpus_per_token, r.nodes_per_token,
                r.busiest_factor, topologies::format_duration(e.experts_mlp_s).c_str(),
                step.breakdown.overlapped_s > 0 ? "; the micro-batches hide part of the exchanges" : "");
  return line;
}

}  // namespace treering::analysis
