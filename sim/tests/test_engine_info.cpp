// The simulator module links the SimGrid the project requires (>= 3.32, checked at configure time).
#include <doctest/doctest.h>

#include <cstdio>

#include "treering/sim/engine_info.hpp"

TEST_CASE("the SimGrid library loaded at run time is 3.32 or newer") {
  int major = 0;
  int minor = 0;
  int patch = 0;
  const std::string version = treering::sim::simgrid_version();
  REQUIRE(std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) == 3);
  CHECK((major > 3 || (major == 3 && minor >= 32)));
}
