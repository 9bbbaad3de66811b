// Building a Degradation from names people use: the NIC of a GPU, a cable between two named devices.
#include <stdexcept>

#include "treering/sim/replay.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::sim {

void slow_nic(const topologies::Topology& topology, int gpu, double fraction, Degradation& degradation) {
  if (!(fraction > 0 && fraction <= 1)) throw topologies::InputError("a NIC's bandwidth fraction must be in (0, 1]");
  if (gpu < 0 || gpu >= topology.gpu_count())
    throw topologies::InputError("GPU " + std::to_string(gpu) + " does not exist");
  // The NIC is on the way from the GPU to any GPU of another domain.
  for (int other = 0; other < topology.gpu_count(); ++other) {
    if (topology.domain_of_gpu(other) == topology.domain_of_gpu(gpu)) continue;
    for (topologies::LinkId id : topology.route(gpu, other).links) {
      const topologies::DeviceId nic = topology.link(id).to;
      if (topology.device(nic).kind != topologies::DeviceKind::nic) continue;
      for (topologies::LinkId out : topology.out_links(nic)) {
        degradation.link_bandwidth_factor[out] = fraction;
        degradation.link_bandwidth_factor[topology.link(out).reverse] = fraction;
      }
      return;
    }
  }
  throw topologies::InputError("GPU " + std::to_string(gpu) + " reaches no other domain through a NIC");
}

void take_down(const topologies::Topology& topology, const std::string& a, const std::string& b,
               Degradation& degradation) {
  const topologies::DeviceId from = topology.find_device(a);
  const topologies::DeviceId to = topology.find_device(b);
  if (from < 0) throw topologies::InputError("no device named '" + a + "' (treering topo dot CLUSTER lists them)");
  if (to < 0) throw topologies::InputError("no device named '" + b + "' (treering topo dot CLUSTER lists them)");
  for (topologies::LinkId id : topology.out_links(from)) {
    if (topology.link(id).to != to) continue;
    degradation.cables_down.resize(static_cast<size_t>(topology.link_count()), false);
    degradation.cables_down[static_cast<size_t>(id)] = true;
    degradation.cables_down[static_cast<size_t>(topology.link(id).reverse)] = true;
    return;
  }
  throw topologies::InputError("no cable between '" + a + "' and '" + b + "'");
}

}  // namespace treering::sim
