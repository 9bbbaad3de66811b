#include "replay_progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

namespace treering::cli {

namespace {
bool progress_asked = false;  // --progress on the command line (one command a process)
}  // namespace

bool progress_shown() { return progress_asked || ::isatty(STDERR_FILENO); }

void ask_for_progress() { progress_asked = true; }

std::function<void(double)> terminal_progress(const std::string& what) {
  if (!progress_shown()) return {};
  struct State {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    bool shown = false;
  };
  auto state = std::make_shared<State>();
  return [state, what](double done) {
    constexpr double kQuiet_s = 2.0;
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - state->start).count();
    if (elapsed_s < kQuiet_s && !state->shown) return;
    state->shown = true;
    std::fprintf(stderr, "\rsimulating %s: %3.0f %%%s", what.c_str(), 100 * done, done >= 1 ? "\n" : "");
    std::fflush(stderr);
  };
}

}  // namespace treering::cli
