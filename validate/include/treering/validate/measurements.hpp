// Collective measurements as people have them: nccl-tests' (and rccl-tests') plain-text output, and the CSV
// this project ships its datasets in. Each row becomes (op, bytes, ranks, time), the time the faster of the
// out-of-place and in-place columns (both are the same operation; the faster is the one that did not wait on
// anything else). Errors are InputError: "FILE:LINE: error: ...".
//
// A log: '#  Rank  N Group ...' lines give the ranks; data rows are "size count type redop root time algbw
// busbw #wrong time algbw busbw #wrong". A CSV: "bytes,time_us_outofplace,algbw_GBps,busbw_GBps,time_us_inplace"
// rows, with optional "# ranks: N" and "# op: NAME" comments (NAME: allreduce, allgather, reducescatter,
// broadcast, sendrecv, alltoall). The op, when not given, is the binary that nccl-tests' "# Collective test
// starting: all_gather_perf" line names (all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf,
// sendrecv_perf, alltoall_perf), else follows from the bus factor, busbw / algbw, and a log's redop and root
// columns: 2 (n-1)/n all-reduce; (n-1)/n reduce-scatter with a reduction, all-gather or all-to-all without one
// (an error: only '# op:' can say which); 1 broadcast with a root, send/recv with root -1. A CSV without its
// ranks takes them from that ratio on its largest row (all-reduce assumed). Example: algbw 239.41, busbw 448.90
// on 16 ranks: 1.875 = 2 x 15/16, all-reduce. A send/recv over n ranks (sendrecv_perf: each rank to the next)
// is timed as its slowest pair, rank n-1 to rank 0 (across nodes when the ranks span several).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/model/collectives.hpp"

namespace treering::validate {

struct CollectiveMeasurement {
  model::CollectiveOp op = model::CollectiveOp::allreduce;
  double bytes = 0;
  int ranks = 0;
  double time_s = 0;
  std::string file;
  int line = 0;
  std::optional<model::CollectiveAlgorithm> algorithm;  // what ran, when the file says (realrun's cpu rings)
  // The NCCL release that ran, "2.26.6", when a log says: NCCL's own "... NCCL INFO NCCL version 2.26.6+cuda12.8"
  // line (NCCL_DEBUG=INFO; NCCL's log lines are skipped, not read as rows), a comment line that starts with
  // "NCCL version" ("# NCCL version: 2.26.6+cuda12.8"), or nccl-tests' "nccl-library=22606"; "" otherwise.
  std::string nccl_release;
};

// treering-realrun's bench JSON (`bench allreduce|allgather|sendrecv -o FILE.json`) is read too: per size the
// median of the slowest rank, the ranks from its provenance.
//
// Reads one file (a log, a CSV or a realrun JSON, told apart by their first characters and lines). Throws
// topologies::InputError for a file that cannot be read, is neither, has no data rows, or has a malformed row.
std::vector<CollectiveMeasurement> read_collective_measurements(const std::string& path);

}  // namespace treering::validate
