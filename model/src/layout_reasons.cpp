// versus_tensor_parallel (planner.hpp): why a layout wins or loses against plain tensor parallelism.
#include "treering/model/planner.hpp"
#include "treering/topologies/units.hpp"

namespace treering::model {

std::string versus_tensor_parallel(const PlannedLayout& choice, const PlannedLayout& tp) {
  namespace units = topologies;
  const DecodeResult& mine = choice.attention.slowest;
  const DecodeResult& theirs = tp.attention.slowest;
  const double my_comm_s = mine.breakdown.intra_node_s + mine.breakdown.inter_node_s;
  const double their_comm_s = theirs.breakdown.intra_node_s + theirs.breakdown.inter_node_s;
  return "vs " + layout_name(tp.layout) + ": KV cache " + units::format_bytes(choice.step.memory.kv_cache) +
         "/GPU vs " + units::format_bytes(tp.step.memory.kv_cache) + " (max context " +
         units::format_token_count(choice.step.memory.max_seq_len) + " vs " +
         units::format_token_count(tp.step.memory.max_seq_len) + " tokens; " +
         std::to_string(choice.step.memory.max_batch) + " vs " + std::to_string(tp.step.memory.max_batch) +
         " sequences of this length); attention " + units::format_duration(mine.latency_s) + " a layer vs " +
         units::format_duration(theirs.latency_s) + " (communication " + units::format_duration(my_comm_s) + " vs " +
         units::format_duration(their_comm_s) + ", compute " + units::format_duration(mine.breakdown.compute_s) +
         " vs " + units::format_duration(theirs.breakdown.compute_s) + "); " +
         units::format_duration(choice.step.step_s) + " a token vs " + units::format_duration(tp.step.step_s);
}

}  // namespace treering::model
