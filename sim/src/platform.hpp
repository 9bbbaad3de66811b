// The SimGrid platform of a topology (every GPU a host, every directed link a SimGrid link at its effective
// bandwidth and no latency, routes from the graph through TreeringZone), and running simulations in a
// child process. Private to sim.
#pragma once

#include <simgrid/s4u.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "treering/sim/replay.hpp"
#include "simulated_units.hpp"
#include "treering_zone.hpp"

namespace treering::sim {

// Guard pages under each actor's stack: 1 up to 8,192 actors, so that an overflow of the actor's stack (16 KiB;
// 512 KiB under AddressSanitizer) crashes at once instead of corrupting memory silently; 0 beyond, where the
// extra memory mapping per actor would run into Linux's 65,530 (vm.max_map_count).
int actor_guard_pages(double actors);

// A flow's two actors (simgrid_network.hpp) only send or receive: small stacks, since every actor's stack is
// touched whole (RSS = actors x stack: 16 KiB keeps 65,536 flows under way at 2 GB).
#if defined(__SANITIZE_ADDRESS__)
constexpr unsigned kFlowActorStack_KiB = 128;
#else
constexpr unsigned kFlowActorStack_KiB = 16;
#endif

class SimulatedPlatform {
 public:
  // `degradation` (may be null) scales links and takes cables out of the routes; it must outlive the platform.
  // `actors`: the most actors that will live at once (0: one per GPU), for their guard pages.
  explicit SimulatedPlatform(const topologies::Topology& topology, const Degradation* degradation = nullptr,
                             double actors = 0);
  ~SimulatedPlatform();
  simgrid::s4u::Host* host(int gpu) const { return hosts_[static_cast<size_t>(gpu)]; }
  void run();

 private:
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::vector<simgrid::s4u::Host*> hosts_;
};

// Runs `simulation` in a forked child (SimGrid keeps one engine per process and its clock does not restart)
// and returns the bytes it produced; its exceptions come back as topologies::InputError (those that were) or
// std::runtime_error. Call it from a single-threaded process: a child forked while another thread holds a lock
// (the allocator's, stdio's) may deadlock on it (POSIX allows only async-signal-safe calls in such a child), so
// `treering sweep` runs its cases in single-threaded worker processes
// (cli/analysis/include/treering/analysis/sweep_workers.hpp), not threads. The child dies with the calling thread
// (PR_SET_PDEATHSIG).
std::string run_in_child(const std::function<std::string()>& simulation);

}  // namespace treering::sim
