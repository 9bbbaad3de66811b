// The "wins from" scan of `treering crossover` (two algorithms, and --vs tp: context against tensor parallelism):
// the shortest context length from which the first contestant wins at every longer one.
#pragma once

#include <optional>
#include <vector>

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

}  // namespace treering::analysis
