// `treering crossover`'s computation: where one algorithm beats another over context length x GPU count, and by
// how much (crossover_tp.hpp: --vs tp, context against tensor parallelism). A cell whose two latencies lie within
// each other's band (model/uncertainty.hpp) is one where the model cannot say which wins.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "treering/model/uncertainty.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/validate/report.hpp"

namespace treering::analysis {

// One length's contest: the first wins, loses, or there is none (neither fits): a length without a contest
// neither breaks nor extends a run of wins.
enum class Outcome { wins, loses, no_contest };

struct LengthOutcome {
  long long seq_len = 0;
  Outcome outcome = Outcome::no_contest;
};

// `by_length` in increasing length. Example: wins at 80k, loses at 160k, wins at 320k and 640k: from 320k; a loss
// at the longest length: never (nullopt).
std::optional<long long> wins_from(const std::vector<LengthOutcome>& by_length);

// What `treering crossover` is asked, both modes (the command's options and defaults).
struct CrossoverRequest {
  std::string cluster;  // a preset name or a YAML file
  std::vector<int> nodes{1, 2, 4, 8, 16};
  std::string workload = "paper-mha16";
  std::vector<int> batches;         // empty: the workload's; one value with two algorithms, several with --vs tp
  std::vector<long long> seq_lens;  // in increasing order
  // Two algorithms: the two compared, the first's speedup shown. --vs tp: the combines tried (empty: all).
  std::vector<std::string> algorithms{"tree", "ring"};
  validate::Engine engine = validate::Engine::model;  // --vs tp: the model only
  std::vector<topologies::Setting> settings;
  std::string impl = "efficient";
  int jobs = 1;  // worker processes (two algorithms)
};

// One (GPU count, length) of two algorithms.
struct CrossoverCell {
  int gpus = 0;
  long long seq_len = 0;
  double first_s = 0, second_s = 0;  // the two algorithms' latencies
  model::Band first_band, second_band;
  double speedup() const { return second_s / first_s; }  // > 1: the first wins
  // Within each other's band: the model cannot say which wins.
  bool uncertain() const { return model::bands_overlap(first_band, second_band); }
};

// A run of consecutive lengths (of one GPU count) where the two lie within each other's band.
struct LengthRun {
  long long first = 0, last = 0;
};

// Per GPU count: the shortest length from which the first wins at every longer one (nullopt: never), the same
// where it also wins outside the other's band, and the runs of uncertain lengths.
struct CrossoverSummary {
  int gpus = 0;
  std::optional<long long> wins_from;
  std::optional<long long> surely_wins_from;
  std::vector<LengthRun> uncertain;
};

struct CrossoverResult {
  std::string first, second;                  // the two algorithms
  std::vector<CrossoverCell> cells;           // GPU counts outer, lengths inner
  std::vector<int> gpus;                      // the GPU counts, in order
  std::vector<long long> seq_lens;            // the lengths, in order
  std::vector<model::RelativeErrors> errors;  // behind every latency's band (for a legend)
  std::vector<CrossoverSummary> summaries;    // one per GPU count, in order
};

// Throws topologies::InputError for bad input: not two different algorithms, several batches, a count below 1.
CrossoverResult run_crossover(const CrossoverRequest& request);

// `treering crossover --format json`'s records: one per cell.
nlohmann::ordered_json crossover_json(const CrossoverResult& result);

// The checks both modes share: nodes, batches and jobs at least 1, at least one length, a known engine.
void check_crossover_request(const CrossoverRequest& request);

}  // namespace treering::analysis
