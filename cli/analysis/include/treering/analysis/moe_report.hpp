// An MoE layer's dispatch or combine over an EP group (`treering collective --op moe-dispatch|moe-combine`, the
// Python module's collective(op="moe-dispatch")): the model's time by kernel for each batch, its band, and with
// the sim engine the exchange replayed on the routes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "treering/model/moe_exchange.hpp"
#include "treering/model/step.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/sim/collective_replay.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/validate/report.hpp"

namespace treering::analysis {

struct MoeExchangeChoice {
  std::string op = "moe-dispatch";     // moe-dispatch | moe-combine
  std::string workload;                // preset, YAML or config.json (an MoE model)
  std::vector<int> batches{128};       // tokens per GPU
  std::string kernel = "low-latency";  // nccl | low-latency | normal
  std::string dtype;                   // fp8 | bf16 (empty: fp8 dispatch, bf16 combine)
  int redundant_experts = 0;
  double skew = 1;
  std::vector<int> gpus;  // the EP group (empty: every GPU of the cluster)
  std::vector<validate::Engine> engines = {validate::Engine::model};
};

struct MoeExchangeEstimate {
  model::MoeExchange exchange;
  model::Band band;
  std::optional<sim::SimulatedCollective> simulated;
};

struct MoeExchangeReport {
  model::CommGroup group;
  std::string workload;
  model::RelativeErrors errors;                // the band's: the kernel model against published measurements
  std::vector<MoeExchangeEstimate> estimates;  // one per batch
};

bool is_moe_op(const std::string& op);
// Throws topologies::InputError for what cannot be asked (model::estimate_moe_exchange's refusals, batches below 0).
MoeExchangeReport moe_exchange_report(const topologies::Topology& topology, const MoeExchangeChoice& choice);
// What the kernel moves and how, for people: "DeepEP's low-latency kernels: an RDMA write per (token, expert)".
std::string describe(model::EpKernel kernel);
nlohmann::ordered_json moe_estimate_json(const MoeExchangeEstimate& estimate, const MoeExchangeReport& report);
// One exchange's figures (kernel, tokens, bytes, time, destinations): what moe_estimate_json and a step's JSON show.
nlohmann::ordered_json exchange_json(const model::MoeExchange& exchange);
// A step's expert parallelism for people: "EP 64 (low-latency kernel), 32 tokens a GPU: dispatch 60 us + combine
// 110 us a MoE layer, ..."; empty without it.
std::string expert_step_line(const model::StepResult& step);
nlohmann::ordered_json expert_step_json(const model::ExpertStep& experts);

}  // namespace treering::analysis
