// A long replay's progress on a terminal (or with --progress): "simulating ring at 1000000 tokens: 45 %", rewritten in
// place once the replay has run two seconds (short ones print nothing), a line break at the end.
#pragma once

#include <functional>
#include <string>

namespace treering::cli {

// Empty when progress is not shown (progress_shown()).
std::function<void(double)> terminal_progress(const std::string& what);

// Progress lines ("simulating choice 1 of 3...", a sweep's bar) go to stderr only on a terminal, or where the
// command was given --progress (add_progress_flag, commands.hpp): a pipe, a file or a test gets the output alone.
bool progress_shown();
// What --progress does: progress_shown() is true from here on.
void ask_for_progress();

}  // namespace treering::cli
