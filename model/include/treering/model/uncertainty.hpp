// How sure a prediction is: a band around it, from the calibration's residuals when the cluster is calibrated, else
// from the implementation profile's validation against public data. Pure.
//
// A part predicted as x with relative error e (a measurement m satisfies |x - m| / m <= e) lies in
// [x / (1 + e), x / (1 - e)]; the band of a prediction adds its parts' bands: its compute (kernels, host time)
// and its exposed communication, each with its own error.
// Example: 100 us of compute (e = 0.125) and 50 us of communication (e = 0.36):
//   low = 100 / 1.125 + 50 / 1.36 = 88.9 + 36.8 = 125.6 us; high = 100 / 0.875 + 50 / 0.64 = 114.3 + 78.1 = 192.4 us.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "treering/model/decode.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::model {

struct RelativeErrors {
  double compute = 0;
  double communication = 0;
  double network_latency = 0;  // communication across domains at latency-bound sizes
  std::string source;          // where they come from, for people
  bool host_staged = false;    // the communication errors were raised to kHostStagedError
};

// The errors of a prediction on `topology` made with `profile`:
//   calibrated (the calibration's provenance gives max_abs_rel_error E): communication E; compute E when the
//   calibration fitted compute figures (hbm_efficiency or launch_overhead), else the profile's compute error;
//   uncalibrated: the profile's uncertainty (network_latency: the profile's, for the inter-node communication
//   whose latency is at least its transfer; the public multi-node data puts the model furthest off there).
//   Calibrated, network_latency is communication's. A prediction outside what the calibration measured
//   (extrapolated) gets twice the calibrated errors. Where GPUs of one node reach each other through host memory
//   (a PCIe fabric without P2P, two or more GPUs per node) and no calibration measured communication, both
//   communication errors are at least kHostStagedError.
RelativeErrors prediction_errors(const topologies::Topology& topology, const topologies::ImplProfile& profile,
                                 bool extrapolated);

// What a prediction uses of its cluster's calibration, part by part: a part outside what the calibration measured
// gets twice the calibration's largest |error|; communication inside it, where the prediction's collectives run
// from `collective_bytes.first` to `.second` bytes, the calibration's residuals at those sizes
// (calibration_residual). Example: a decode whose attention was not calibrated (compute extrapolated) and whose
// all-reduces of 64 B-4 KiB lie inside the measured 8 B-16 GiB: compute carries the profile's error (not doubled),
// communication the fit's largest |error| at the measured sizes 64 B-4 KiB.
struct CalibrationUse {
  bool compute_extrapolated = false;
  bool communication_extrapolated = false;
  std::optional<std::pair<double, double>> collective_bytes;  // none: the calibration's largest |error|
};
RelativeErrors prediction_errors(const topologies::Topology& topology, const topologies::ImplProfile& profile,
                                 const CalibrationUse& use);

// The collective fit's largest |error| over the sizes it measured from the last at or below `low_bytes` to the first
// at or above `high_bytes` (provenance.residuals); the calibration's largest |error| where it lists none. Example:
// residuals {4 KiB: 0.9 %, 8 KiB: 5.3 %, 16 KiB: 6.9 %}: 4-8 KiB -> 5.3 %; exactly 4 KiB -> 0.9 %; 5-9 KiB -> 6.9 %.
double calibration_residual(const topologies::CalibrationProvenance& provenance, double low_bytes, double high_bytes);

// The model's worst |error| on GPU-to-GPU traffic staged through host memory (NCCL's SHM transport, PCIe without
// P2P), uncalibrated: the rtx4090-pcie preset against public all-reduces of two RTX 4090s in one host
// (validate/data/nccl-pcie): 0.686 ms predicted for 16 MiB where 7.84 ms were measured, -91.3 %, rounded up. The
// rate of that path is set by the host (CPU, memory, root complex), which a cluster file does not describe; the
// preset takes its PCIe links' rate. Public runs reach 5-11x less on one server (pairs and fours of cards, the ones
// stored) and ~2x more on two others (4 and 8 cards, not stored): there the preset is too slow, outside this band.
constexpr double kHostStagedError = 0.92;

struct Band {
  double low_s = 0;
  double high_s = 0;  // +infinity when an error reaches 1 (no upper bound)
};

Band band_of(double compute_s, double communication_s, const RelativeErrors& errors);
// The same with a part of the communication, `network_latency_s` (within communication_s), at errors.network_latency.
// Example: 100 us of compute (0.125), 50 us of communication (0.23) of which 30 us cross nodes latency-bound
// (0.54): low = 88.9 + 20 / 1.23 + 30 / 1.54 = 124.7 us; high = 114.3 + 20 / 0.77 + 30 / 0.46 = 205.5 us.
Band band_of(double compute_s, double communication_s, double network_latency_s, const RelativeErrors& errors);

// Whether two predictions lie within each other's band (their bands share a point): then the model cannot say
// which is faster. Example: 100 us [89, 114] and 110 us [98, 126] overlap; 100 us and 130 us [116, 149] do not.
bool bands_overlap(const Band& a, const Band& b);

// The band of one layer's latency: compute + host time against the exposed communication.
Band latency_band(const DecodeResult& result, const RelativeErrors& errors);

// The band of a generation of `tokens` tokens taking `generation_s` in all: its communication is tokens x layers x
// the layer's exposed communication at the first length (at most the whole), the rest compute (prefill, weights).
Band generation_band(const DecodeResult& first, int layers, long long tokens, double generation_s,
                     const RelativeErrors& errors);

}  // namespace treering::model
