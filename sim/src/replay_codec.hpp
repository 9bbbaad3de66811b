// A replay's outcome as bytes, for the one place it crosses a process boundary: SimGrid runs in a child
// process (run_in_child) and hands its ReplayResult back through a pipe. Private to sim.
#pragma once

#include <string>

#include "treering/sim/replay.hpp"

namespace treering::sim::detail {

std::string encode(const ReplayResult& result);
// Throws std::runtime_error when the bytes end early or run on.
ReplayResult decode_replay(const std::string& bytes);

}  // namespace treering::sim::detail
