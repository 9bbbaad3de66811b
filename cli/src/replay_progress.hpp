// A long replay's progress on a terminal: "simulating ring at 1000000 tokens: 45 %", rewritten in place once the
// replay has run two seconds (short ones print nothing), a line break at the end.
#pragma once

#include <functional>
#include <string>

namespace treering::cli {

// Empty when stderr is not a terminal (a pipe, a file, a test).
std::function<void(double)> terminal_progress(const std::string& what);

}  // namespace treering::cli
