// The two kinds of `treering calibrate` run, as the command and the Python module's calibrate() both make them:
//  - benchmarks (nccl-tests logs, bytes,time CSVs, treering-realrun bench and step JSON) fit a cluster: its
//    network (collectives, send/recv bands), its attention kernel (one HBM efficiency and launch overhead, then a
//    line per kernel shape) and its decode step, part by part; the result is the cluster file with a
//    `calibration:` section;
//  - timed decodes (a timings CSV, treering-realrun decode JSON) fit an implementation profile's overheads; the
//    result is the fitted profile's YAML.
// One kind per run. Reading the files, the fits and the text to write are here; opening the output (before the
// fit, so that a bad path fails first) and the report are the front ends'.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "treering/analysis/network_calibration.hpp"
#include "treering/topologies/cluster.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/validate/attention_fit.hpp"
#include "treering/validate/compute_fit.hpp"
#include "treering/validate/overhead_fit.hpp"
#include "treering/validate/step_fit.hpp"

namespace treering::analysis {

enum class CalibrationKind { benchmarks, timed_decodes };

// True when `path` holds timed decodes (a timings CSV or treering-realrun decode JSON) rather than benchmarks.
bool is_timings_file(const std::string& path);
// The kind of run `files` make. Throws topologies::InputError when they mix the two kinds.
CalibrationKind calibration_kind(const std::vector<std::string>& files);

// The one-GPU (tp 1) steps of `files`' step files; `notes` gets a line when loopback steps (tp > 1) were left
// out. Throws InputError when step files hold no one-GPU step.
std::vector<validate::StepPoint> read_one_gpu_steps(const std::vector<std::string>& files, bool calibrating,
                                                    std::vector<std::string>& notes);
// The attention measurements of `files` (bench attention files), those at `tokens` only when it is not empty.
std::vector<validate::AttentionMeasurement> read_attention_files(const std::vector<std::string>& files,
                                                                 const std::vector<long long>& tokens);

struct BenchmarkCalibrationRequest {
  topologies::ClusterSpec spec;  // the cluster the benchmarks ran on, its edits and node counts applied
  std::string base_yaml;         // its file's text with the same edits and node counts written in
  std::vector<std::string> files;
  std::vector<long long> tokens;  // attention benchmarks: fit only these token counts (empty: every one)
  std::string output_name;        // the file to be written, for messages
};

struct BenchmarkCalibration {
  NetworkCalibration network;  // network.fit.calibration holds everything fitted, with its provenance
  std::size_t collectives = 0, sends = 0;
  std::vector<validate::AttentionMeasurement> kernels;
  std::optional<validate::ComputeFit> compute;              // with kernels
  std::vector<validate::AttentionShapeFit> attention_fits;  // with kernels, where the GPU's multiprocessors are known
  std::vector<validate::StepPoint> steps;
  std::optional<validate::StepFit> step_fit;  // with steps
  std::vector<std::string> notes;             // what was left out, and why ("note: ..." lines)
  std::string cluster_yaml;                   // base_yaml with the calibration: section (checked to load)
  bool fitted_anything() const { return !network.fit.fitted.empty() || sends > 0 || !kernels.empty(); }
};

// Throws InputError for bad files and for what the fits refuse.
BenchmarkCalibration calibrate_benchmarks(const BenchmarkCalibrationRequest& request);
// `treering calibrate --format json` on benchmarks (and Python's calibrate()): the network's fitted parameters
// and errors, its send/recv bands, the attention kernel's fit by shape, the step's parts, the notes.
nlohmann::ordered_json benchmark_calibration_json(const BenchmarkCalibration& result,
                                                  const BenchmarkCalibrationRequest& request);

struct OverheadCalibrationRequest {
  std::vector<std::string> files;      // timings CSVs and realrun decode JSON
  std::optional<std::string> cluster;  // the cluster realrun decode files ran on (CSV rows name their own)
  std::string impl;              // the prior profile; empty: treering-realrun-cpu for realrun cpu files, else efficient
  std::vector<std::string> fit;  // overheads to fit; empty: every one the timings depend on
  std::string output_name;       // the file to be written, for messages
};

struct OverheadCalibration {
  topologies::ImplProfile prior;
  validate::OverheadFit fit;
  std::string profile_yaml;  // the fitted profile, with a comment naming its inputs (checked to load)
};

OverheadCalibration calibrate_overheads(const OverheadCalibrationRequest& request);
// `treering calibrate --format json` on timed decodes: each overhead (prior, fitted, its error, its share) and
// each timing (measured, prior, fitted, error).
nlohmann::ordered_json overhead_calibration_json(const OverheadCalibration& result,
                                                 const OverheadCalibrationRequest& request);

}  // namespace treering::analysis
