#include "treering/validate/p2p_fit.hpp"

#include <algorithm>
#include <stdexcept>

#include "treering/topologies/topology.hpp"
#include "treering/validate/banded_fit.hpp"
#include "treering/validate/report.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate {

P2pFit calibrate_p2p(const topologies::ClusterSpec& base, const std::vector<CollectiveMeasurement>& measured) {
  if (measured.empty()) throw topologies::InputError("no send/recv measurements to fit");
  const topologies::Topology topology(base);
  std::vector<size_t> of_tier[2];  // indices of the scale-up and scale-out measurements
  P2pFit fit;
  fit.sizes_bytes = {measured.front().bytes, measured.front().bytes};
  for (size_t i = 0; i < measured.size(); ++i) {
    const CollectiveMeasurement& m = measured[i];
    if (m.op != model::CollectiveOp::sendrecv) {
      throw topologies::InputError(m.file + ": a " + model::to_string(m.op) + " is not a point-to-point measurement");
    }
    check_ranks_fit(m.ranks, topology.gpu_count(), m.file);
    const bool one_domain = m.ranks < 2 || topology.domain_of_gpu(0) == topology.domain_of_gpu(m.ranks - 1);
    of_tier[one_domain ? 0 : 1].push_back(i);
    fit.sizes_bytes = {std::min(fit.sizes_bytes.first, m.bytes), std::max(fit.sizes_bytes.second, m.bytes)};
  }
  fit.rel_errors.assign(measured.size(), 0.0);
  for (int tier = 0; tier < 2; ++tier) {
    if (of_tier[tier].empty()) continue;
    std::vector<double> sizes, times;
    for (size_t i : of_tier[tier]) sizes.push_back(measured[i].bytes), times.push_back(measured[i].time_s);
    const BandedFit bands = fit_size_bands(sizes, times);
    (tier == 0 ? fit.scale_up : fit.scale_out) = bands.bands;
    for (size_t k = 0; k < of_tier[tier].size(); ++k) fit.rel_errors[of_tier[tier][k]] = bands.rel_errors[k];
  }
  return fit;
}

void apply_p2p(const P2pFit& fit, topologies::Calibration& calibration) {
  calibration.p2p_scale_up = fit.scale_up;
  calibration.p2p_scale_out = fit.scale_out;
  calibration.provenance.p2p_sizes_bytes = fit.sizes_bytes;
}

}  // namespace treering::validate
