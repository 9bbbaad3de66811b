// Chrome / Perfetto trace of a replay: the JSON "traceEvents" form that chrome://tracing and ui.perfetto.dev
// open. One process (the cluster), one thread per GPU; compute and waits are complete events ("X"), which
// never overlap on a GPU; sends are async begin/end pairs ("b"/"e"), which may. Microseconds.
#include <cstdio>
#include <string>

#include "treering/sim/replay.hpp"

namespace treering::sim {
namespace {

const char* name_of(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::compute: return "compute";
    case ActivityKind::send: return "send";
    case ActivityKind::wait: return "wait";
    case ActivityKind::collective: return "collective";
  }
  return "?";
}

}  // namespace

std::string chrome_trace(const model::DecodePlan& plan, const ReplayResult& replay) {
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  char line[256];
  bool first = true;
  auto add = [&](const char* text) {
    out += first ? "  " : ",\n  ";
    out += text;
    first = false;
  };
  for (size_t rank = 0; rank < plan.gpus.size(); ++rank) {
    std::snprintf(line, sizeof line,
                  "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": %zu, \"args\": {\"name\": \"GPU %d\"}}",
                  rank, plan.gpus[rank]);
    add(line);
  }
  int next_id = 0;
  for (const Activity& a : replay.activities) {
    if (a.kind == ActivityKind::send) {  // async: sends overlap the rank's compute and each other
      for (const char* phase : {"b", "e"}) {
        std::snprintf(line, sizeof line,
                      "{\"name\": \"send to GPU %d\", \"cat\": \"send\", \"ph\": \"%s\", \"id\": %d, \"pid\": 0, "
                      "\"tid\": %d, \"ts\": %.6f}",
                      a.peer >= 0 ? plan.gpus[static_cast<size_t>(a.peer)] : -1, phase, next_id, a.rank,
                      (phase[0] == 'b' ? a.start_s : a.end_s) * 1e6);
        add(line);
      }
      ++next_id;
      continue;
    }
    std::snprintf(line, sizeof line,
                  "{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 0, \"tid\": %d, \"ts\": %.6f, "
                  "\"dur\": %.6f, \"args\": {\"peer\": %d}}",
                  name_of(a.kind), model::to_string(plan.algorithm), a.rank, a.start_s * 1e6,
                  (a.end_s - a.start_s) * 1e6, a.peer);
    add(line);
  }
  return out + "\n]}\n";
}

}  // namespace treering::sim
