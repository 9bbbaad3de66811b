// What NCCL's protocols, channel counts and chunk pipelines make of the tiers' bandwidth, as a function of the
// message size (internal to the collective model). Pure. Facts from NCCL v2.26.2-1 (the version of the shipped
// nccl-tests set), file by file in nccl_rates.cpp; units: bytes, seconds, bytes per second.
#pragma once

#include "treering/model/collectives.hpp"

namespace treering::model {

// The bus bandwidth an all-reduce (or ring collective) of `bytes` gets with `algorithm`/`protocol`, from the
// tiers' rate `tier_Bps` (protocol factor not applied): the protocol factor, NCCL's caps per protocol (across
// domains), its tree correction for mid sizes and its narrowing of channels for small buffers.
// Worked example, 2 x DGX H100 (tier 360 GB/s, 8 search / 16 channels), tree/LL128 at 1 MiB:
// min(360 x 0.92 x 120/128 = 310.5, 8 x 36.7 = 293.6) = 293.6 GB/s x correction 0.6 (1 MiB = 64 B x 2^14)
// = 176.2 GB/s, all 16 channels busy (1 MiB >= 16 x 640 threads x 8 B).
double nccl_bus_Bps(const CommGroup& group, CollectiveOp op, CollectiveAlgorithm algorithm, Protocol protocol,
                    double tier_Bps, double bytes);

// NCCL's tree correction factor (src/graph/tuning.cc treeCorrectionFactor) for a tree all-reduce of `bytes`:
// 0.4-1.0, indexed by log2(bytes / 64) from 64 B to 256 MiB, 1 outside.
double tree_correction(Protocol protocol, double bytes);

// The channels NCCL runs a ring or tree of `bytes` on (src/enqueue.cc topoGetAlgoInfo): it drops channels
// while bytes < channels x threads x threshold (threads 512 LL and Simple, 640 LL128; thresholds 8 B, LL128
// 8 B, Simple 64 B, ring LL 8 B x ranks). Example: ring/LL on 16 ranks, 16 channels, 256 KiB: 256 KiB /
// (512 x 128 B) = 4 channels. `group.nccl.channels` when the group has no channel model (one domain).
int nccl_channels_used(const CommGroup& group, CollectiveAlgorithm algorithm, Protocol protocol, double bytes);

// The pipeline fill of an NVLS-tree all-reduce of `bytes` moving at `rate_Bps` (bytes / its transfer time):
// NCCL cuts the buffer into chunks over nvls_channels x g concurrent (channel, head) pipes, and a chunk passes
// D = 2 + 2 log2(k) stages (in-switch reduce, up and down each network level, in-switch broadcast) before the
// pipes run full: fill = (D - 1) x chunk x pipes / rate. Chunk (src/enqueue.cc calcCollChunking, NVLS_TREE):
// 128 KiB (NCCL_NVLS_CHUNKSIZE; 64 KiB from 4 nodes), 64 KiB under 4 x pipes x 128 KiB, 32 KiB under
// pipes x 64 KiB, and never more than the pipe's share bytes / pipes.
// Worked example, 2 x 8 H100 (128 pipes, 270 GB/s, D = 4), 16 MiB: 64 KiB chunks, 3 x 8 MiB / 270 GB/s = 93.2 us.
double nvls_tree_fill_s(const CommGroup& group, double bytes, double rate_Bps);

// The same for NVLS across domains, reduced in the network (SHARP): D = 4 stages (in-switch reduce, up to the
// network's switches, back down, in-switch broadcast), whatever the number of domains; NVLS's chunks
// (src/enqueue.cc calcCollChunking, NVLS): 128 KiB, 64 KiB under 64 x pipes x 128 KiB, 32 KiB under
// 8 x pipes x 64 KiB, 16 KiB under 2 x pipes x 32 KiB (NCCL's 32 KiB cap where its tuner's NVLS bandwidth is
// under 150 GB/s is not modelled). Worked example, 2 x 8 H100 (128 pipes, 270 GB/s), 1 GiB: 128 KiB chunks,
// 3 x 16 MiB / 270 GB/s = 186.4 us; 1 MiB: 16 KiB chunks, no more than 8 KiB a pipe: 3 x 1 MiB / 270 GB/s = 11.7 us.
double nvls_sharp_fill_s(const CommGroup& group, double bytes, double rate_Bps);

}  // namespace treering::model
