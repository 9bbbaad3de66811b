// Small hand-made clusters for tests, with figures chosen to make hand arithmetic easy.
#pragma once

#include <string>

#include "treering/topologies/load.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::topologies::testing {

// One GPU model; append `nodes:` and (optionally) `network:` to it.
inline std::string cluster_head(const std::string& name) {
  return "name: " + name +
         "\n"
         "gpu_models:\n"
         "  G:\n"
         "    hbm_bandwidth: 2TB/s\n"
         "    hbm_capacity: 80GB\n"
         "    peak_fp16: 1000TFLOPS\n"
         "    launch_overhead: 2us\n";
}

// A node group with an NVSwitch of `bandwidth`/1us and `nics` NICs of 200Gb/s (25 GB/s) / 2us.
inline std::string nvswitch_group(int count, int gpus, int nics, const std::string& bandwidth = "100GB/s") {
  std::string text = "  - name: box\n    count: " + std::to_string(count) +
                     "\n    gpu: G\n    gpus_per_node: " + std::to_string(gpus) +
                     "\n    fabric: {type: nvswitch, bandwidth: " + bandwidth + ", latency: 1us}\n";
  if (nics > 0) text += "    nics: {count: " + std::to_string(nics) + ", bandwidth: 200Gb/s, latency: 2us}\n";
  return text;
}

inline Topology build(const std::string& yaml) { return Topology(load_cluster_text(yaml, "test.yaml")); }

// The names of the devices a route passes, source first.
inline std::string path_of(const Topology& topology, const Route& route) {
  std::string path;
  for (LinkId id : route.links) {
    const Link& link = topology.link(id);
    if (path.empty()) path = topology.device(link.from).name;
    path += " > " + topology.device(link.to).name;
  }
  return path;
}

}  // namespace treering::topologies::testing
