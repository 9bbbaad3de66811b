// Graphviz export: boxes per node and NVLink domain, one edge per cable.
#include <doctest/doctest.h>

#include "small_clusters.hpp"

using namespace treering::topologies;
using namespace treering::topologies::testing;

namespace {

int count_of(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

}  // namespace

TEST_CASE("one cluster box per node and one edge per cable") {
  Topology topology = build(cluster_head("two") + "nodes:\n" + nvswitch_group(2, 4, 2) +
                            "network: {topology: single-switch, hop_latency: 0.5us}\n");
  std::string dot = to_dot(topology);
  CHECK(dot.find("graph \"two\" {") != std::string::npos);
  CHECK(count_of(dot, "subgraph cluster_node") == 2);
  // Per node: 4 GPU-NVSwitch + 4 GPU-NIC cables, plus 4 NIC-switch cables: 2 x 8 + 4 = 20.
  CHECK(count_of(dot, " -- ") == 20);
  CHECK(count_of(dot, " -- ") == topology.link_count() / 2);
  CHECK(dot.find("label=\"box-1/gpu3\"") != std::string::npos);
  CHECK(dot.back() == '\n');
}

TEST_CASE("a multi-node NVLink domain is drawn as a box around its nodes") {
  Topology topology(load_cluster("gb200-nvl72"));
  std::string dot = to_dot(topology);
  CHECK(count_of(dot, "subgraph cluster_domain") == 1);
  CHECK(count_of(dot, "subgraph cluster_node") == 18);
}

TEST_CASE("names are escaped so that Graphviz can read any of them") {
  Topology topology =
      build("name: 'my \"big\" \\ cluster'\n" + cluster_head("x").substr(cluster_head("x").find('\n') + 1) +
            "nodes:\n" + nvswitch_group(1, 2, 0));
  std::string dot = to_dot(topology);
  CHECK(dot.find("graph \"my \\\"big\\\" \\\\ cluster\" {") != std::string::npos);
}
