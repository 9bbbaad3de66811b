// A sweep launched under mpirun or srun: the cases split across the ranks, rank 0 joining their rows. The ranks
// meet through files beside the output (a cluster's shared file system), not through MPI: libsimgrid exports
// MPI's symbols too (SMPI), so one binary cannot hold both, and srun needs no MPI at all.
#pragma once

#include <string>
#include <vector>

namespace treering::analysis {

// How the ranks of one launch recognise each other's files, and how long rank 0 waits for them.
struct RendezvousOptions {
  std::string launch_id;    // empty: the launcher's (PMIX_NAMESPACE, Open MPI's jobid, SLURM_JOB_ID.SLURM_STEP_ID)
  double timeout_s = 3600;  // rank 0's wait for the others, after its own cases
};

class SweepRanks {
 public:
  // Rank and size from the launcher's environment (Open MPI's OMPI_COMM_WORLD_*, PMI_*, Slurm's SLURM_PROCID
  // and SLURM_STEP_NUM_TASKS); rank 0 of 1 when there is none. `output` is the file rank 0 will write. Under a
  // launcher, the launch id names every part file (OUTPUT.part-R-of-N.ID), so that the parts of an earlier,
  // aborted run are never read as this one's; throws std::invalid_argument when neither the options nor the
  // launcher give one.
  SweepRanks(std::string output, RendezvousOptions options = {});

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank passes its pieces; rank 0 gets all ranks' pieces, rank by rank, once each has written them to
  // OUTPUT.part-R-of-N.ID (removed after). Others get an empty list. Throws std::runtime_error with a rank's
  // own error when it failed, or naming the ranks still missing after the timeout.
  std::vector<std::vector<std::string>> gather(const std::vector<std::string>& mine) const;
  // A rank that fails leaves its message where rank 0 looks for its pieces, so rank 0 does not wait forever.
  void report_failure(const std::string& message) const;

 private:
  std::string part_path(int rank) const;
  std::string missing_ranks_message(int first_missing) const;
  int rank_ = 0;
  int size_ = 1;
  std::string output_;
  std::string job_;  // the launch id: parts of earlier runs are not mistaken for these
  double timeout_s_ = 3600;
};

}  // namespace treering::analysis
