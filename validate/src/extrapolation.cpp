// extrapolation (calibrate.hpp): whether a prediction lies outside what a calibration measured.
#include <cmath>
#include <sstream>

#include "treering/validate/calibrate.hpp"

namespace treering::validate {

std::string extrapolation(const topologies::Calibration& calibration, double bytes, int ranks) {
  const topologies::CalibrationProvenance& p = calibration.provenance;
  std::ostringstream why;
  if (p.sizes_bytes && (bytes < p.sizes_bytes->first || bytes > p.sizes_bytes->second)) {
    why << std::llround(bytes) << " B is outside the calibrated sizes " << std::llround(p.sizes_bytes->first) << "-"
        << std::llround(p.sizes_bytes->second) << " B";
  }
  if (p.ranks && (ranks < p.ranks->first || ranks > p.ranks->second)) {
    why << (why.tellp() > 0 ? "; " : "") << ranks << " ranks is outside the calibrated " << p.ranks->first << "-"
        << p.ranks->second;
  }
  return why.str();
}

}  // namespace treering::validate
