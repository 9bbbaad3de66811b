// Fitting a cluster's network to measured collectives (validate::calibrate_collectives) and send/recv bands
// (validate::calibrate_p2p), with the provenance the calibration file records: the part of `treering
// calibrate` the Python module's calibrate() shares.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/validate/p2p_fit.hpp"

namespace treering::analysis {

struct NetworkCalibration {
  validate::CalibrationFit fit;  // its calibration has the provenance (inputs, date, tool) even with no collectives
  std::optional<validate::P2pFit> p2p;  // the send/recv bands, applied to fit.calibration
};

// "2026-11-26".
std::string today_utc();

// `spec`: the cluster the measurements ran on. `measured`: collectives; `sends`: send/recv measurements (either
// may be empty). Throws std::invalid_argument for what the fits refuse.
NetworkCalibration calibrate_network(const topologies::ClusterSpec& spec,
                                     const std::vector<validate::CollectiveMeasurement>& measured,
                                     const std::vector<validate::CollectiveMeasurement>& sends,
                                     const std::vector<std::string>& inputs);

}  // namespace treering::analysis
