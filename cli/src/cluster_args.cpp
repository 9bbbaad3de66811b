#include "cluster_args.hpp"

#include "treering/topologies/load.hpp"

namespace treering::cli {
namespace {

void add_overrides(CLI::App& command, ClusterArgs& args) {
  command.add_option("--nodes", args.nodes, "Number of nodes (clusters with one node group)");
  command.add_option("--gpus-per-node", args.gpus_per_node, "GPUs per node, up to the node's max_gpus_per_node");
}

}  // namespace

void add_cluster_positional(CLI::App& command, ClusterArgs& args) {
  command.add_option("cluster", args.cluster, "A preset name (treering topo list) or a YAML file")->required();
  add_overrides(command, args);
}

void add_cluster_option(CLI::App& command, ClusterArgs& args) {
  command.add_option("--cluster", args.cluster, "A preset name (treering topo list) or a YAML file")->required();
  add_overrides(command, args);
}

topologies::Topology load_topology(const ClusterArgs& args) {
  return topologies::build_topology(args.cluster, {args.nodes, args.gpus_per_node});
}

model::Workload load_workload(const std::string& name_or_path) {
  const bool path = name_or_path.find('/') != std::string::npos ||
                    (name_or_path.size() > 5 && (name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml")));
  if (!path) return model::find_workload(name_or_path);
  model::Workload workload = topologies::load_workload_file(name_or_path);
  model::validate(workload);
  return workload;
}

}  // namespace treering::cli
