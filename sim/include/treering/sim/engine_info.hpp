// What the simulator module was built against. The SimGrid replay of decode plans builds on this module.
#pragma once

#include <string>

namespace treering::sim {

// The version of the SimGrid library loaded at run time, "3.32.0".
std::string simgrid_version();

}  // namespace treering::sim
