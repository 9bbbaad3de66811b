// Fitting the compute model to measured attention kernels (treering-realrun `bench attention -o FILE.json`): the
// model's time is launch + bytes / (rated HBM x efficiency) (memory-bound), so a latency-bandwidth fit of
// (bytes, time) gives the launch overhead and, over the GPU model's rated bandwidth, the efficiency.
// Example: 2 MB in 0.37 ms and 33 MB in 5.9 ms -> 5.6 GB/s; over a rated 1,008 GB/s: efficiency 0.0056.
#pragma once

#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"

namespace treering::validate {

struct AttentionMeasurement {
  std::string workload;
  long long tokens = 0;
  double time_s = 0;
  std::string file;
};

// True when `path` is a realrun `bench attention` file.
bool is_attention_file(const std::string& path);
std::vector<AttentionMeasurement> read_attention_measurements(const std::string& path);  // InputError on bad input

struct ComputeFit {
  double launch_overhead_s = 0;
  double hbm_efficiency = 0;  // in (0, 1]: achieved over the first GPU model's rated HBM bandwidth
  double median_abs_rel_error = 0;
};

// Throws std::invalid_argument with fewer than 2 distinct sizes or a non-positive fitted bandwidth.
ComputeFit fit_compute(const topologies::ClusterSpec& base, const std::vector<AttentionMeasurement>& measured);

}  // namespace treering::validate
