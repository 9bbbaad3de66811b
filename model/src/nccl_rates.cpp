// NCCL's size-dependent rates (see nccl_rates.hpp). Sources, NVIDIA/nccl v2.26.2-1:
// - src/graph/tuning.cc ncclTopoTuneModel: protocol caps (ring LL: min(llMaxBw, 0.5 busBw); ring LL128:
//   min(0.92 busBw, channels x perChMaxRingLL128Bw); tree all-reduce: min(0.92 busBw, channels x perChMaxTreeBw),
//   then LL: min(busBw / 3.8, llMaxBw), LL128: min(busBw x 120/128, channels x perChMaxTreeLL128Bw));
//   ncclTopoGetAlgoTime: treeCorrectionFactor;
// - src/enqueue.cc topoGetAlgoInfo: channel narrowing; calcCollChunking: NVLS-tree and NVLS chunk sizes;
// - src/device/all_reduce.h (NVLS_TREE): per channel, warps for the in-switch scatter/reduce, the network
//   send/receive and the in-switch broadcast/gather work on successive chunks: a pipeline.
// - src/include/device.h: 512 threads (LL, Simple), 640 (LL128); src/include/comm.h: thread thresholds.
#include "nccl_rates.hpp"

#include <algorithm>
#include <cmath>

namespace treering::model {
namespace {

constexpr double kKiB = 1024;

// treeCorrectionFactor[protocol][log2(bytes / 64)], {LL, LL128, Simple}, 64 B .. 256 MiB.
constexpr double kTreeCorrection[kProtocols][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

double capped(double bus_Bps, double cap_Bps) { return cap_Bps > 0 ? std::min(bus_Bps, cap_Bps) : bus_Bps; }

}  // namespace

double tree_correction(Protocol protocol, double bytes) {
  if (bytes < 64) return 1.0;
  const int index = static_cast<int>(std::floor(std::log2(std::floor(bytes / 64))));  // NCCL's log2i(bytes >> 6)
  return index < 23 ? kTreeCorrection[static_cast<int>(protocol)][index] : 1.0;
}

int nccl_channels_used(const CommGroup& group, CollectiveAlgorithm algorithm, Protocol protocol, double bytes) {
  const int channels = group.nccl.channels;
  if (channels < 1) return channels;
  const double threads = protocol == Protocol::ll128 ? 640 : 512;
  double threshold_bytes = protocol == Protocol::simple ? 64 : 8;
  if (algorithm == CollectiveAlgorithm::ring && protocol == Protocol::ll) threshold_bytes *= group.ranks;
  // NCCL drops one channel at a time while bytes < nc x threads x threshold, down to 1: the most nc with
  // nc x threads x threshold <= bytes.
  const int wanted = static_cast<int>(std::floor(bytes / (threads * threshold_bytes)));
  return std::clamp(wanted, 1, channels);
}

double nccl_bus_Bps(const CommGroup& group, CollectiveOp op, CollectiveAlgorithm algorithm, Protocol protocol,
                    double tier_Bps, double bytes) {
  const NcclChannels& nccl = group.nccl;
  const bool nccl_path = algorithm == CollectiveAlgorithm::ring || algorithm == CollectiveAlgorithm::tree;
  if (nccl.channels < 1 || !nccl_path) return tier_Bps * protocol_efficiency(protocol);  // one domain: tier rates
  if (algorithm == CollectiveAlgorithm::tree && op == CollectiveOp::allreduce) {
    double bus_Bps = capped(tier_Bps * 0.92, nccl.tree_bus_Bps);
    if (protocol == Protocol::ll) bus_Bps = capped(bus_Bps / 3.8, nccl.ll_max_bus_Bps);
    if (protocol == Protocol::ll128) bus_Bps = capped(bus_Bps * 120.0 / 128.0, nccl.tree_ll128_bus_Bps);
    bus_Bps *= tree_correction(protocol, bytes);
    return bus_Bps * nccl_channels_used(group, algorithm, protocol, bytes) / nccl.channels;
  }
  double bus_Bps = tier_Bps * protocol_efficiency(protocol);
  if (protocol == Protocol::ll) bus_Bps = capped(bus_Bps, nccl.ll_max_bus_Bps);
  if (protocol == Protocol::ll128) bus_Bps = capped(bus_Bps, nccl.ll128_bus_Bps);
  return bus_Bps * nccl_channels_used(group, algorithm, protocol, bytes) / nccl.channels;
}

namespace {

// (D - 1) chunk-times at the pipes' shared rate, the chunk no more than a pipe's share (one chunk each).
double pipeline_fill_s(double stages, double chunk_bytes, double pipes, double bytes, double rate_Bps) {
  chunk_bytes = std::min(chunk_bytes, bytes / pipes);
  return (stages - 1) * chunk_bytes * pipes / rate_Bps;
}

}  // namespace

double nvls_tree_fill_s(const CommGroup& group, double bytes, double rate_Bps) {
  if (!(bytes > 0) || !(rate_Bps > 0)) return 0.0;
  const double pipes = double(group.nccl.nvls_channels) * group.ranks_per_domain;
  double chunk_bytes = group.domains >= 4 ? 64 * kKiB : 128 * kKiB;
  if (bytes < 4 * pipes * chunk_bytes && chunk_bytes > 64 * kKiB) chunk_bytes = 64 * kKiB;
  if (bytes < pipes * chunk_bytes && chunk_bytes > 32 * kKiB) chunk_bytes = 32 * kKiB;
  const double stages = 2 + 2 * std::floor(std::log2(double(group.domains)));
  return pipeline_fill_s(stages, chunk_bytes, pipes, bytes, rate_Bps);
}

double nvls_sharp_fill_s(const CommGroup& group, double bytes, double rate_Bps) {
  if (!(bytes > 0) || !(rate_Bps > 0)) return 0.0;
  const double pipes = double(group.nccl.nvls_channels) * group.ranks_per_domain;
  double chunk_bytes = 128 * kKiB;
  if (bytes < 64 * pipes * chunk_bytes) chunk_bytes = 64 * kKiB;
  if (bytes < 8 * pipes * chunk_bytes && chunk_bytes > 32 * kKiB) chunk_bytes = 32 * kKiB;
  if (bytes < 2 * pipes * chunk_bytes && chunk_bytes > 16 * kKiB) chunk_bytes = 16 * kKiB;
  return pipeline_fill_s(4, chunk_bytes, pipes, bytes, rate_Bps);
}

}  // namespace treering::model
