// What predict and simulate compute for one case (a workload, a length, an algorithm) on a TP x CP layout, with
// the layer or step around it and a generation estimate: shared by the `treering` command and the Python module,
// so that both give the same rows.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "decode_output.hpp"
#include "simulated_decode.hpp"
#include "treering/model/layout_model.hpp"
#include "treering/sim/replay.hpp"

namespace treering::cli {

// --tp, --cp, --placement, --tp-in-domain, --scope.
struct LayoutChoice {
  std::optional<int> tp;
  std::optional<int> cp;
  std::string replicas = "1";  // copies of the layout side by side (data parallelism): a count, or "all" that fit
  std::string placement = "tp-inner";
  bool tp_in_domain = false;
  std::string scope = "attention";
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
model::LayoutGroups layout_groups(const LayoutChoice& layout, const topologies::Topology& topology, const std::vector<int>& gpus);

// scope layer|step: the whole layer or step around the row's attention (row.result: CP group `slowest_group`'s,
// the slowest), in row.step; throws std::invalid_argument when it does not fit in memory.
void add_step(const LayoutChoice& layout, const model::LayoutModel& layouts, const model::Workload& workload,
              int slowest_group, DecodeRow& row);

// The model's row: the layout's combine (every CP group on its heads, the slowest reported, the volume of all),
// the scope and generation asked for; with check_memory, std::invalid_argument when the case does not fit in a
// GPU's memory (without, computed all the same: peak_memory_bytes says so; a layer or step that does not fit is
// refused either way).
DecodeRow predict_row(const LayoutChoice& layout, const GenerationChoice& generation, const model::LayoutModel& layouts,
                      const model::Workload& workload, long long seq_len, model::DecodeAlgorithm algorithm,
                      const model::PlanOptions& options, bool check_memory = true);

// The simulator's: every CP group replayed at once, their transfers sharing links (with --scope layer|step the TP
// groups' collectives after them: sim/layout_replay.hpp), the slowest reported with the volume of all of them;
// with a degradation, its healthy latency. check_memory as predict_row's.
SimulatedCase simulate_row(const LayoutChoice& layout, const GenerationChoice& generation, const ReplayChoice& replay,
                           const model::LayoutModel& layouts, const model::Workload& workload, long long seq_len,
                           model::DecodeAlgorithm algorithm, const model::PlanOptions& options, bool check_memory = true);

}  // namespace treering::cli
