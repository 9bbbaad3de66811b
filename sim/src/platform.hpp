// The SimGrid platform of a topology (every GPU a host, every directed link a SimGrid link at its effective
// bandwidth and no latency, routes from the graph through TreeringZone), and running simulations in a
// child process. Private to sim.
#pragma once

#include <simgrid/s4u.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "treering_zone.hpp"

namespace treering::sim {

class SimulatedPlatform {
 public:
  explicit SimulatedPlatform(const topologies::Topology& topology);
  ~SimulatedPlatform();
  simgrid::s4u::Host* host(int gpu) const { return hosts_[static_cast<size_t>(gpu)]; }
  void run();

 private:
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::vector<simgrid::s4u::Host*> hosts_;
};

// Runs `simulation` in a forked child (SimGrid keeps one engine per process and its clock does not restart)
// and returns the doubles it produced; its exceptions come back as std::runtime_error.
std::vector<double> run_in_child(const std::function<std::vector<double>()>& simulation);

}  // namespace treering::sim
