// Predicts timed decodes (decode_timings.hpp) under an implementation profile: one cluster model per (cluster,
// GPUs), built once, so that a fit can re-predict every timing for each trial profile cheaply.
#pragma once

#include <memory>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/validate/decode_timings.hpp"

namespace treering::validate {

class TimingModels {
 public:
  // Throws topologies::InputError (at the timing's file and line) for an unknown cluster, workload or algorithm,
  // or GPUs the cluster cannot hold.
  explicit TimingModels(const std::vector<TimedDecode>& timings);

  // The predicted time of timing `index`: prefill (when timed) + generating `tokens` tokens, or one layer's
  // decode step when the timing has no token count.
  double predict_s(size_t index, const topologies::ImplProfile& profile) const;
  size_t size() const { return cases_.size(); }

 private:
  struct Case {
    std::shared_ptr<const topologies::Topology> topology;  // kept alive for `decode`
    std::shared_ptr<const model::DecodeModel> decode;
    model::Workload workload;
    model::DecodeAlgorithm algorithm{};
    TimedDecode timing;
  };
  std::vector<Case> cases_;
};

}  // namespace treering::validate
