// The plans treering-realrun runs, made the one way `decode` and `bench --for-plan` share: the workload (its
// batch replaced when asked), the cluster's model over the ranks' GPUs 0 .. ranks-1 (as many nodes as they
// need), and realrun's plan options for the backend (plan_options(): cpu, cuda or cuda-loopback); on cuda, a
// single algorithm NCCL_ALGO names in the environment is the one its collectives take. A workload with multi-head
// latent attention is planned as its combine (mla_run.hpp's combine_workload): the states are kv_lora_rank wide.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "treering/model/decode.hpp"
#include "treering/model/realrun_plans.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::realrun::app {

class PlanMaker {
 public:
  // Throws std::invalid_argument for an unknown workload or algorithm; InputError for a bad cluster.
  PlanMaker(const std::string& cluster, const std::string& workload, int batch, int ranks,
            model::RealrunBackend backend);
  model::DecodePlan plan(model::DecodeAlgorithm algorithm, long long seq_len) const;
  const model::DecodeModel& model() const { return *model_; }
  const model::Workload& workload() const { return workload_; }  // as given (an MLA one included)
  bool latent() const;                                           // multi-head latent attention

 private:
  topologies::Topology topology_;
  model::Workload workload_;
  model::Workload planned_;  // workload_, or its MLA combine
  model::PlanOptions options_;
  std::unique_ptr<model::DecodeModel> model_;
};

}  // namespace treering::realrun::app
