// simulate's what-if options: stragglers, slow NICs and cables down (sim::Degradation).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "treering/sim/replay.hpp"

namespace treering::cli {

struct DegradationArgs {
  std::vector<std::string> slow_gpus;   // "GPU:FACTOR": its kernels take FACTOR times as long
  std::vector<std::string> slow_nics;   // "GPU:FRACTION": the NIC it uses at FRACTION of its bandwidth
  std::vector<std::string> links_down;  // "DEVICE,DEVICE": the cable between them out of service
  bool any() const { return !slow_gpus.empty() || !slow_nics.empty() || !links_down.empty(); }
};

void add_degradation_options(CLI::App& command, DegradationArgs& args);

// Throws std::invalid_argument naming the option at fault.
sim::Degradation make_degradation(const DegradationArgs& args, const topologies::Topology& topology);

}  // namespace treering::cli
