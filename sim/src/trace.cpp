// Chrome / Perfetto trace of a replay: the JSON "traceEvents" form that chrome://tracing and ui.perfetto.dev
// open. One process (the cluster), one thread per GPU; compute and waits are complete events ("X"), which
// never overlap on a GPU; sends are async begin/end pairs ("b"/"e"), which may. Microseconds.
#include <nlohmann/json.hpp>
#include <string>

#include "treering/sim/replay.hpp"

namespace treering::sim {
namespace {

using nlohmann::ordered_json;

const char* name_of(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::compute: return "compute";
    case ActivityKind::send: return "send";
    case ActivityKind::wait: return "wait";
    case ActivityKind::collective: return "collective";
  }
  return "?";
}

const model::DecodePlan& plan_of(const std::vector<GroupPlan>& groups, const Activity& a) {
  return *groups.at(static_cast<size_t>(a.group)).plan;
}

std::string phase_label(const model::DecodePlan& plan, int phase) {
  if (phase < 0 || phase >= static_cast<int>(plan.phases.size())) return "";
  return plan.phases[static_cast<size_t>(phase)].label;
}

int gpu_of(const ReplayResult& replay, int rank) { return rank >= 0 ? replay.gpus.at(static_cast<size_t>(rank)) : -1; }

// A send: an async begin/end pair, since sends overlap the rank's compute and each other.
void add_send(ordered_json& events, const ReplayResult& replay, const Activity& a, int id) {
  for (const char* phase : {"b", "e"}) {
    events.push_back({{"name", "send to GPU " + std::to_string(gpu_of(replay, a.peer))},
                      {"cat", "send"},
                      {"ph", phase},
                      {"id", id},
                      {"pid", 0},
                      {"tid", a.rank},
                      {"ts", (phase[0] == 'b' ? a.start_s : a.end_s) * 1e6}});
  }
}

}  // namespace

std::string chrome_trace(const model::DecodePlan& plan, const ReplayResult& replay) {
  return chrome_trace(std::vector<GroupPlan>{{nullptr, &plan, 0}}, replay);
}

std::string chrome_trace(const std::vector<GroupPlan>& groups, const ReplayResult& replay) {
  ordered_json events = ordered_json::array();
  for (size_t rank = 0; rank < replay.gpus.size(); ++rank) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", rank},
                      {"args", {{"name", "GPU " + std::to_string(replay.gpus[rank])}}}});
  }
  int next_id = 0;
  for (const Activity& a : replay.activities) {
    if (a.kind == ActivityKind::send) {
      add_send(events, replay, a, next_id++);
      continue;
    }
    // Named by what the GPU does (the phase: "all-reduce max of lse", ...), grouped by kind (compute, wait,
    // collective); waits say from which GPU.
    const model::DecodePlan& plan = plan_of(groups, a);
    const std::string label = phase_label(plan, a.phase);
    const std::string name = a.kind == ActivityKind::wait || label.empty() ? name_of(a.kind) : label;
    events.push_back(
        {{"name", name},
         {"cat", name_of(a.kind)},
         {"ph", "X"},
         {"pid", 0},
         {"tid", a.rank},
         {"ts", a.start_s * 1e6},
         {"dur", (a.end_s - a.start_s) * 1e6},
         {"args",
          {{"algorithm", model::to_string(plan.algorithm)}, {"phase", label}, {"peer GPU", gpu_of(replay, a.peer)}}}});
  }
  // One event per line (a trace of a large replay stays greppable); every value written by the JSON library.
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) out += (i ? ",\n  " : "  ") + events[i].dump();
  return out + "\n]}\n";
}

}  // namespace treering::sim
