// SimGrid actors' stacks: small (256 KiB for the programs' driver, 16 KiB a flow's actor), with a guard page under
// each up to 8,192 actors, so that an actor that outgrows its stack crashes at once instead of writing over
// whatever memory lies below it.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <stdexcept>
#include <string>

#include "../src/platform.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// 2,048 frames of 4 KiB: 8 MiB of stack, past the 256 KiB (and AddressSanitizer's 2 MiB) an actor has.
int deep(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  frame[4095] = frame[0];
  return depth > 0 ? deep(depth - 1) + frame[4095] : frame[0];
}

}  // namespace

TEST_CASE("guard pages: one per actor up to 8,192 GPUs, none beyond (Linux's mapping limit)") {
  CHECK(sim::actor_guard_pages(16) == 1);
  CHECK(sim::actor_guard_pages(8192) == 1);
  CHECK(sim::actor_guard_pages(16384) == 0);
}

TEST_CASE("an actor that overflows its stack kills the simulation process, which is reported") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  std::string message;
  try {
    sim::run_in_child([&] {
      const rlimit no_core{0, 0};
      ::setrlimit(RLIMIT_CORE, &no_core);  // the crash is expected: no core file
      sim::SimulatedPlatform platform(topology);
      simgrid::s4u::Actor::create("deep", platform.host(0), [] { deep(2048); });
      platform.run();
      return std::string();
    });
  } catch (const std::runtime_error& error) {
    message = error.what();
  }
  CHECK(message.find("simulator: the simulation process died") == 0);
}
