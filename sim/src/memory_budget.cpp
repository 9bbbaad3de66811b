#include "memory_budget.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::sim {

double replay_memory_bytes(int ranks, double collective_flows, double concurrent_flows, bool in_simgrid) {
  constexpr double kPerFlow_bytes = 256, kBase_bytes = 64e6, kPerRank_bytes = 16e3, kPerFlowUnderWay_bytes = 40e3;
  return kBase_bytes + kPerRank_bytes * ranks + kPerFlow_bytes * collective_flows +
         (in_simgrid ? kPerFlowUnderWay_bytes * concurrent_flows : 0.0);
}

double available_memory_bytes() {
  double available = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    double kilobytes = 0;
    meminfo >> kilobytes;
    if (key == "MemAvailable:") available = kilobytes * 1024;
    meminfo.ignore(256, '\n');
  }
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");  // cgroup v2; "max" when unlimited
  std::string limit;
  if (cgroup >> limit && limit != "max") {
    const double bytes = std::strtod(limit.c_str(), nullptr);
    if (bytes > 0) available = available > 0 ? std::min(available, bytes) : bytes;
  }
  return available;
}

void check_replay_memory(int ranks, double collective_flows, double concurrent_flows, bool in_simgrid,
                         double budget_bytes) {
  const double needed = replay_memory_bytes(ranks, collective_flows, concurrent_flows, in_simgrid);
  const double available = budget_bytes > 0 ? budget_bytes : available_memory_bytes();
  constexpr double kShare = 0.8;  // a fifth left to the system and the rest of the process: a replay that takes
                                  // it all swaps rather than fails
  if (available > 0 && needed > kShare * available) {
    throw topologies::InputError(
        "the simulation of " + std::to_string(ranks) + " GPUs would need about " + topologies::format_bytes(needed) +
        " of memory and " + topologies::format_bytes(available) +
        " is available (it may take 80 % of it): simulate fewer GPUs, or use the model (treering predict)");
  }
}

}  // namespace treering::sim
