// Runs contradicted by a larger run of their own sweep (engine_consistency.hpp).
#include "treering/validate/engine_consistency.hpp"

#include <cstdio>
#include <filesystem>

#include "treering/topologies/units.hpp"

namespace treering::validate {
namespace {

bool same_setup(const EngineRun& a, const EngineRun& b) {
  return a.engine == b.engine && a.benchmark == b.benchmark && a.workload == b.workload && a.tp == b.tp &&
         a.identical_sequences == b.identical_sequences;
}

// Whether `larger` does at least `run`'s work and more of it: no smaller batch, prompt or output, one of them
// larger (a serving run's output lengths equal: see engine_consistency.hpp).
bool does_more_work(const EngineRun& larger, const EngineRun& run) {
  const bool outputs =
      run.benchmark == "serve" ? larger.output_len == run.output_len : larger.output_len >= run.output_len;
  const bool at_least = larger.batch >= run.batch && larger.input_len >= run.input_len && outputs;
  const bool more = larger.batch > run.batch || larger.input_len > run.input_len || larger.output_len > run.output_len;
  return at_least && more;
}

std::string contradiction_text(const EngineRun& run, const EngineRun& larger, double slowdown) {
  return topologies::format_duration(run.measured_s) + ", " + slowdown_text(slowdown) + " the " +
         topologies::format_duration(larger.measured_s) + " of a larger run of the same setup (batch " +
         std::to_string(larger.batch) + ", " + std::to_string(larger.input_len) + " in, " +
         std::to_string(larger.output_len) + " out: " + std::filesystem::path(larger.file).filename().string() + ")";
}

}  // namespace

std::string slowdown_text(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", ratio);
  return text;
}

std::vector<ContradictedRun> contradicted_runs(const std::vector<EngineRun>& runs) {
  std::vector<ContradictedRun> contradicted;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ContradictedRun worst{i, i, kContradictedSlowdown, ""};
    for (std::size_t j = 0; j < runs.size(); ++j) {
      if (j == i || !same_setup(runs[i], runs[j]) || !does_more_work(runs[j], runs[i])) continue;
      const double slowdown = runs[i].measured_s / runs[j].measured_s;
      if (slowdown > worst.slowdown) worst = {i, j, slowdown, ""};
    }
    if (worst.larger == i) continue;
    worst.text = contradiction_text(runs[i], runs[worst.larger], worst.slowdown);
    contradicted.push_back(worst);
  }
  return contradicted;
}

}  // namespace treering::validate
