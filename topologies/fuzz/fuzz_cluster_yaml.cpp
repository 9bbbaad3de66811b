// libFuzzer target: a cluster description (YAML text) through load_cluster_text, then the topology graph built
// from the spec (the checks only the graph can make) and one route across it.
// Bad input must end in InputError (or std::invalid_argument); anything else is a finding: another exception,
// a crash, a sanitizer report, a timeout.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/topology.hpp"

using namespace treering::topologies;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = treering::fuzz::as_text(data, size);
  try {
    ClusterSpec spec = load_cluster_text(text, "fuzz.yaml");
    const Topology topology(std::move(spec));
    const int gpus = topology.gpu_count();
    treering::fuzz::check(gpus >= 1, "a topology has at least one GPU");
    if (gpus >= 2) {
      const Route route = topology.route(0, gpus - 1);
      treering::fuzz::check(!route.links.empty(), "a route between two GPUs has links");
      treering::fuzz::check(std::isfinite(route.latency_s) && route.latency_s >= 0, "a route's latency is finite");
      treering::fuzz::check(route.bottleneck_Bps > 0 && std::isfinite(route.bottleneck_Bps),
                            "a route's bottleneck is positive");
    }
  } catch (const InputError& error) {
    treering::fuzz::check(!error.message().empty(), "an InputError says what is wrong");
  } catch (const std::invalid_argument&) {}
  return 0;
}
