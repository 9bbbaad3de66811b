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

// The phase's label, fit for a JSON string (plain text: quotes and backslashes dropped, at most 80 bytes).
std::string phase_label(const model::DecodePlan& plan, int phase) {
  if (phase < 0 || phase >= static_cast<int>(plan.phases.size())) return "";
  std::string label;
  for (char c : plan.phases[static_cast<size_t>(phase)].label) {
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20 && label.size() < 80) label += c;
  }
  return label;
}

}  // namespace

std::string chrome_trace(const model::DecodePlan& plan, const ReplayResult& replay) {
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  char line[384];
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
    // Named by what the GPU does (the phase: "all-reduce max of lse", ...), grouped by kind (compute, wait,
    // collective); waits say from which GPU.
    const std::string label = phase_label(plan, a.phase);
    const std::string name = a.kind == ActivityKind::wait || label.empty() ? name_of(a.kind) : label;
    std::snprintf(line, sizeof line,
                  "{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 0, \"tid\": %d, \"ts\": %.6f, "
                  "\"dur\": %.6f, \"args\": {\"algorithm\": \"%s\", \"phase\": \"%s\", \"peer GPU\": %d}}",
                  name.c_str(), name_of(a.kind), a.rank, a.start_s * 1e6, (a.end_s - a.start_s) * 1e6,
                  model::to_string(plan.algorithm), label.c_str(),
                  a.peer >= 0 ? plan.gpus[static_cast<size_t>(a.peer)] : -1);
    add(line);
  }
  return out + "\n]}\n";
}

}  // namespace treering::sim
