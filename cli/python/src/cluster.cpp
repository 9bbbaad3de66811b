#include "cluster.hpp"

#include <stdexcept>

#include "treering/topologies/load.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::python {

Cluster::Cluster(ClusterRecipe recipe) : recipe_(std::move(recipe)) {
  const topologies::ClusterSource source = topologies::cluster_source(recipe_.source);
  text_ = source.text;
  source_name_ = source.name;
  for (const Edit& edit : recipe_.edits) {
    if (edit.factor == 0) {
      text_ = topologies::apply_settings(text_, source_name_, {{edit.path, edit.value}});
    } else if (edit.factor > 0) {
      text_ = topologies::scale_setting(text_, source_name_, edit.path, edit.factor);
    } else {
      throw topologies::InputError("scale " + edit.path + ": the factor must be positive, got " +
                                   std::to_string(edit.factor));
    }
  }
  // Without edits, exactly what the command does (a file is read by its path); with them, the edited text,
  // its errors still naming the file and line (as build_topology does for --set).
  topologies::ClusterSpec spec = recipe_.edits.empty() ? topologies::load_cluster(recipe_.source)
                                                       : topologies::load_cluster_text(text_, source_name_);
  std::vector<topologies::Setting> sets;
  for (const Edit& edit : recipe_.edits) {
    if (edit.factor == 0) sets.push_back({edit.path, edit.value});
  }
  topologies::check_setting_conflicts(sets, recipe_.nodes, recipe_.gpus_per_node);  // as build_topology does
  topologies::apply_overrides(spec, {recipe_.nodes, recipe_.gpus_per_node, {}});
  topology_ = std::make_unique<topologies::Topology>(std::move(spec));
  decode_ = std::make_unique<model::DecodeModel>(*topology_);
}

Cluster Cluster::with_edits(const std::vector<Edit>& more) const {
  ClusterRecipe recipe = recipe_;
  recipe.edits.insert(recipe.edits.end(), more.begin(), more.end());
  return Cluster(std::move(recipe));
}

std::vector<std::string> Cluster::setting_values(const std::string& path) const {
  return topologies::setting_values(text_, source_name_, path);
}

}  // namespace treering::python
