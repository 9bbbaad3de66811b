// Point-to-point sends as measured (treering-realrun `bench sendrecv`: every rank sends n bytes to the next and
// receives n from the previous, the ring's round), fitted per tier into size bands (banded_fit.hpp): the
// `calibration: p2p:` section, which the model's send/recv costs and the simulator's sends then follow.
// A measurement on r ranks ran on GPUs 0 .. r-1: scale-up when they share one scale-up domain, else scale-out
// (its ring crosses the network, which sets the pace).
#pragma once

#include <utility>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/validate/measurements.hpp"

namespace treering::validate {

struct P2pFit {
  std::vector<topologies::SizeBand> scale_up, scale_out;  // empty where nothing was measured
  std::vector<double> rel_errors;                         // per measurement, in the order given
  std::pair<double, double> sizes_bytes;                  // smallest, largest message measured
};

// Throws std::invalid_argument for no measurements, one that is not a send/recv, more ranks than the cluster has
// GPUs, or a tier whose measurements cannot be fitted (fit_size_bands).
P2pFit calibrate_p2p(const topologies::ClusterSpec& base, const std::vector<CollectiveMeasurement>& measured);

// The fit written into `calibration` (its bands and the provenance's p2p_sizes).
void apply_p2p(const P2pFit& fit, topologies::Calibration& calibration);

}  // namespace treering::validate
