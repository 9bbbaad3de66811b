#include "treering/analysis/network_calibration.hpp"

#include <ctime>

namespace treering::analysis {

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

NetworkCalibration calibrate_network(const topologies::ClusterSpec& spec,
                                     const std::vector<validate::CollectiveMeasurement>& measured,
                                     const std::vector<validate::CollectiveMeasurement>& sends,
                                     const std::vector<std::string>& inputs) {
  NetworkCalibration result;
  validate::CalibrationFit& fit = result.fit;
  fit.calibration.provenance.inputs = inputs;
  fit.calibration.provenance.date = today_utc();
  fit.calibration.provenance.tool = "treering calibrate";
  if (!measured.empty()) fit = validate::calibrate_collectives(spec, measured, inputs, today_utc());
  if (!sends.empty()) {
    result.p2p = validate::calibrate_p2p(spec, sends);
    validate::apply_p2p(*result.p2p, fit.calibration);
  }
  return result;
}

}  // namespace treering::analysis
