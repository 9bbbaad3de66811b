// Reading the optional `calibration:` section of a cluster file. Private to topologies.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "treering/topologies/cluster.hpp"

namespace treering::topologies {

Calibration read_calibration(const std::string& file, const YAML::Node& node);

}  // namespace treering::topologies
