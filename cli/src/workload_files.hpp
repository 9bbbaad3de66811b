// Workloads named on a command line or in an API call: a preset name or a YAML file.
#pragma once

#include <string>

#include "treering/model/workload.hpp"

namespace treering::cli {

// A workload preset name, or a YAML file (a path with '/' or ending in .yaml/.yml), checked.
model::Workload load_workload(const std::string& name_or_path);

}  // namespace treering::cli
