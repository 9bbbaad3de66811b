#include "treering/analysis/workload_files.hpp"

#include "treering/model/weights.hpp"
#include "treering/topologies/load.hpp"

namespace treering::analysis {

model::Workload load_workload(const std::string& name_or_path) {
  const bool json = name_or_path.size() > 5 && name_or_path.ends_with(".json");
  const bool path = json || name_or_path.find('/') != std::string::npos ||
                    (name_or_path.size() > 5 && (name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml")));
  if (!path) return model::find_workload(name_or_path);
  model::Workload workload =
      json ? topologies::load_hf_config_file(name_or_path) : topologies::load_workload_file(name_or_path);
  model::complete_weights(workload);  // a parameter count from the shape when the file gives none (weights.hpp)
  model::validate(workload);
  return workload;
}

std::shared_ptr<const topologies::ImplProfile> load_impl(const std::string& name_or_path) {
  return std::make_shared<const topologies::ImplProfile>(topologies::load_impl_profile(name_or_path));
}

}  // namespace treering::analysis
