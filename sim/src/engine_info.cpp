#include "treering/sim/engine_info.hpp"

#include <xbt/base.h>  // version.h relies on its macros
#include <simgrid/version.h>

namespace treering::sim {

std::string simgrid_version() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  sg_version_get(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace treering::sim
