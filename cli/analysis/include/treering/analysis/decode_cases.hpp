// What predict and simulate compute for one case (a workload, a length, an algorithm) on a TP x CP layout, with
// the layer or step around it and a generation estimate: shared by the `treering` command and the Python module,
// so that both give the same rows.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/simulated_decode.hpp"
#include "treering/model/layout_model.hpp"
#include "treering/sim/replay.hpp"

namespace treering::analysis {

// --tp, --cp, --placement, --tp-in-domain, --scope.
struct LayoutChoice {
  std::optional<int> tp;
  std::optional<int> cp;
  std::optional<int> dcp;       // decode context parallelism inside the TP group (vLLM's --dcp): divides --tp
  bool dp_attention = false;    // data-parallel attention: each GPU of the TP group its own sequences
  std::optional<int> ep;        // expert parallelism over this many GPUs (the layout's, replicas included)
  model::ExpertLayout experts;  // its kernel, redundant experts, skew, micro-batches, dtypes (experts.ep: from ep)
  std::string replicas = "1";   // copies of the layout side by side (data parallelism): a count, or "all" that fit
  model::LayoutOrder placement = model::LayoutOrder::tp_inner;
  bool tp_in_domain = false;
  model::Scope scope = model::Scope::attention;
};

// --tokens N (the time to generate N tokens after the prompt), --prefill (the prompt's estimate added).
struct GenerationChoice {
  std::optional<long long> tokens;
  bool prefill = false;
};

// How the simulator replays: a timeline for a trace, every ring round, SimGrid's network, a degraded cluster,
// every group even where one stands for identical others, progress to show.
struct ReplayChoice {
  bool record_activities = false;
  bool full_ring = false;
  bool in_simgrid = false;
  sim::Degradation degradation;
  bool every_group = false;
  std::function<void(double)> progress;
};

// The layout on the GPUs of `gpus` (all when empty): tp and cp as given; one of them alone takes the rest of the
// GPUs for the other; neither: tp 1 over all of them (the K/V split over every GPU, as the paper runs it).
// Throws std::invalid_argument for a count that does not divide the GPUs, or an impossible placement.
model::LayoutGroups layout_groups(const LayoutChoice& layout, const topologies::Topology& topology,
                                  const std::vector<int>& gpus);

// scope layer|step: the whole layer or step around the row's attention (row.result: CP group `slowest_group`'s,
// the slowest), in row.step; row.memory_shortfall says what it needs when it does not fit in memory.
void add_step(const LayoutChoice& layout, const model::LayoutModel& layouts, const model::Workload& workload,
              int slowest_group, DecodeRow& row);

// The model's row: the layout's combine (every CP group on its heads, the slowest reported, the volume of all),
// the scope and generation asked for. A case that does not fit in a GPU's memory (its attention's, its layer's or
// step's, or its last generated token's) is computed all the same, and marked: row.memory_shortfall says what it
// needs (the `fits` and `does_not_fit` columns). With check_memory (Python's check_memory=True) it is
// std::invalid_argument instead.
DecodeRow predict_row(const LayoutChoice& layout, const GenerationChoice& generation, const model::LayoutModel& layouts,
                      const model::Workload& workload, long long seq_len, model::DecodeAlgorithm algorithm,
                      const model::PlanOptions& options, bool check_memory = false);

// The simulator's: every CP group replayed at once, their transfers sharing links (with --scope layer|step the TP
// groups' collectives after them: sim/layout_replay.hpp), the slowest reported with the volume of all of them;
// with a degradation, its healthy latency. check_memory as predict_row's.
SimulatedCase simulate_row(const LayoutChoice& layout, const GenerationChoice& generation, const ReplayChoice& replay,
                           const model::LayoutModel& layouts, const model::Workload& workload, long long seq_len,
                           model::DecodeAlgorithm algorithm, const model::PlanOptions& options,
                           bool check_memory = false);

// The cases predict and simulate take (the command's options, Python's arguments): every workload x length x
// algorithm, in that order, the last varying fastest, on one layout of `gpus` (all when empty).
struct DecodeRequest {
  std::vector<model::Workload> workloads;
  std::vector<long long> seq_lens;
  std::vector<model::DecodeAlgorithm> algorithms;
  std::vector<int> gpus;
  LayoutChoice layout;
  GenerationChoice generation;
  model::PlanOptions options;
  bool check_memory = false;  // as predict_row's
};

// Called before each case is simulated, with the case; it may set replay.progress for the case.
using BeforeCase =
    std::function<void(ReplayChoice& replay, const model::Workload&, long long seq_len, model::DecodeAlgorithm)>;

// predict_row for each case of `request`, in its order.
std::vector<DecodeRow> predict_rows(const topologies::Topology& topology, const DecodeRequest& request);
// simulate_row for each case of `request`, in its order.
std::vector<SimulatedCase> simulate_cases(const topologies::Topology& topology, const DecodeRequest& request,
                                          ReplayChoice replay, const BeforeCase& before_case = {});

}  // namespace treering::analysis
