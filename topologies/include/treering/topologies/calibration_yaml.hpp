// Writing a cluster's `calibration:` section (cluster.hpp's Calibration) as YAML, next to its reader
// (calibration_loader.cpp): what treering calibrate writes, in the schema's units.
#pragma once

#include <string>

#include "treering/topologies/cluster.hpp"

namespace treering::topologies {

// The section, starting "calibration:" and ending in a newline: times in us, bandwidths in GB/s, sizes in whole
// bytes, fitted numbers to 6 significant digits (3.2e-06 s -> "3.2us", 4.5e10 B/s -> "45GB/s").
std::string calibration_yaml(const Calibration& calibration);

// `base_yaml` with its top-level `calibration:` block (if any) replaced by `calibration`'s, at the end.
std::string with_calibration(const std::string& base_yaml, const Calibration& calibration);

}  // namespace treering::topologies
