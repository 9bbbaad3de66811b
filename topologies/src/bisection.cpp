// Bisection bandwidth as a max-flow (Boost.Graph push-relabel) from the first half of the GPUs to the
// second half, each directed link a capacity (its bandwidth). Example: 2 nodes of 8 GPUs, each GPU
// with one 400 Gb/s NIC on one non-blocking switch -> 8 x 50 GB/s = 400 GB/s per direction.
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <algorithm>
#include <cmath>

#include "topology_impl.hpp"

namespace treering::topologies {

double Topology::bisection_bandwidth_Bps() const {
  const Impl& impl = *impl_;
  const int gpus = gpu_count();
  if (gpus < 2) return 0.0;
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, long long,
                      boost::property<boost::edge_residual_capacity_t, long long,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const int devices = device_count();
  FlowGraph flow(static_cast<size_t>(devices) + 2);
  const auto source = static_cast<Traits::vertex_descriptor>(devices);
  const auto sink = static_cast<Traits::vertex_descriptor>(devices + 1);
  auto capacity = boost::get(boost::edge_capacity, flow);
  auto reverse = boost::get(boost::edge_reverse, flow);
  auto add_arc = [&](Traits::vertex_descriptor a, Traits::vertex_descriptor b, long long bytes_per_s) {
    auto forward = boost::add_edge(a, b, flow).first;
    auto backward = boost::add_edge(b, a, flow).first;
    capacity[forward] = bytes_per_s;
    capacity[backward] = 0;
    reverse[forward] = backward;
    reverse[backward] = forward;
  };
  // Capacities in kB/s: every bandwidth is at most 1e14 B/s (the loader's bound), so even 2^20 GPUs with
  // 64 links each sum to under 2^63. A GPU's source (or sink) arc carries what its own links can: no more
  // can leave (or enter) it, so the arc is never the bottleneck.
  auto kilobytes_per_s = [](double bandwidth_Bps) { return std::max(1LL, std::llround(bandwidth_Bps / 1e3)); };
  std::vector<long long> gpu_link_total(static_cast<size_t>(devices), 0);
  for (LinkId id = 0; id < link_count(); ++id) {
    const Link& hop = link(id);
    add_arc(static_cast<Traits::vertex_descriptor>(hop.from), static_cast<Traits::vertex_descriptor>(hop.to),
            kilobytes_per_s(hop.bandwidth_Bps));
    gpu_link_total[static_cast<size_t>(hop.from)] += kilobytes_per_s(hop.bandwidth_Bps);
  }
  for (int gpu = 0; gpu < gpus; ++gpu) {
    const DeviceId device = impl.gpu_device[gpu];
    auto vertex = static_cast<Traits::vertex_descriptor>(device);
    if (gpu < gpus / 2) {
      add_arc(source, vertex, gpu_link_total[static_cast<size_t>(device)]);
    } else {
      add_arc(vertex, sink, gpu_link_total[static_cast<size_t>(device)]);
    }
  }
  return 1e3 * static_cast<double>(boost::push_relabel_max_flow(flow, source, sink));
}

}  // namespace treering::topologies
