// The collective model's prediction for one operation over sizes, like nccl-tests, with each size's band: what
// `treering collective` prints and the Python module's collective() returns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "treering/model/collectives.hpp"
#include "treering/sim/collective_replay.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/validate/report.hpp"

namespace treering::analysis {

struct CollectiveChoice {
  std::string op = "allreduce";     // allreduce, allgather, reducescatter, broadcast, sendrecv, alltoall
  std::string bytes;                // sizes as the command takes them: "8:16G:x8", "1M,4M"
  std::vector<int> gpus;            // empty: all (send/recv: GPU 0 and the first of another scale-up domain)
  std::string algorithm;            // empty: the fastest (NCCL's pick)
  std::string protocol;             // empty: the fastest
  std::string algorithms = "nccl";  // nccl | all (also what NCCL does not implement)
  std::vector<validate::Engine> engines = {validate::Engine::model};  // sim: the flows replayed on their routes
  bool in_simgrid = false;                                            // sim: on SimGrid's network, not the event loop
};

// A prediction with its band: the calibration's error when the cluster is calibrated (doubled outside what it
// measured), else the collective model's validation.
struct BandedEstimate {
  model::CollectiveEstimate estimate;
  model::Band band;
  model::RelativeErrors errors;
  std::optional<sim::SimulatedCollective> simulated;  // engine sim: the model's pick replayed flow by flow
};

struct CollectiveReport {
  model::CommGroup group;
  std::vector<BandedEstimate> estimates;  // one per size, in the order given
  std::vector<std::string> warnings;      // sizes outside what the calibration measured
};

// Throws std::invalid_argument (topologies::InputError for the sizes) for what cannot be asked.
CollectiveReport collective_report(const topologies::Topology& topology, const CollectiveChoice& choice);

// Which of NCCL's constants the model used: "NCCL 2.26.2 constants for Hopper GPUs, Intel hosts" across domains.
std::string nccl_constants(const model::CommGroup& group);
nlohmann::ordered_json estimate_json(const BandedEstimate& banded, const model::CommGroup& group);
// A replay's figures into `json`: simulated_time_s, simulated_flows, busiest_link_utilisation, simulator.
void add_simulated_json(nlohmann::ordered_json& json, const sim::SimulatedCollective& simulated);

}  // namespace treering::analysis
