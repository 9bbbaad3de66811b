// treering calibrate on timed decodes (a timings CSV, treering-realrun decode JSON): fits an implementation
// profile's overheads (validate/overhead_fit.hpp), reports each one's share of the measured time, and writes the
// fitted profile for --impl.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace treering::cli {

struct OverheadCalibrationArgs {
  std::vector<std::string> files;      // timings CSVs and realrun decode JSON
  std::optional<std::string> cluster;  // the cluster realrun decode files ran on (CSV rows name their own)
  std::string impl;              // the prior profile; empty: treering-realrun-cpu for realrun cpu files, else efficient
  std::vector<std::string> fit;  // overheads to fit; empty: every one the timings depend on
  std::string output;            // the fitted profile (YAML)
  std::string format = "table";
};

// True when `path` holds timed decodes rather than benchmarks.
bool is_timings_file(const std::string& path);

void run_overhead_calibration(const OverheadCalibrationArgs& args);

}  // namespace treering::cli
