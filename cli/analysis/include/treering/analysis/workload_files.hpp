// Workloads and implementation profiles named on a command line or in an API call: a preset name or a YAML file.
#pragma once

#include <memory>
#include <string>

#include "treering/model/workload.hpp"
#include "treering/topologies/impl_profile.hpp"

namespace treering::analysis {

// A workload preset name, or a YAML file (a path with '/' or ending in .yaml/.yml), checked.
model::Workload load_workload(const std::string& name_or_path);

// --impl NAME|FILE as a profile plans carry (topologies/impl_profile.hpp).
std::shared_ptr<const topologies::ImplProfile> load_impl(const std::string& name_or_path);

}  // namespace treering::analysis
