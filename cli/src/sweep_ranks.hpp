// A sweep launched under mpirun or srun: the cases split across the ranks, rank 0 joining their rows. The ranks
// meet through files beside the output (a cluster's shared file system), not through MPI: libsimgrid exports
// MPI's symbols too (SMPI), so one binary cannot hold both, and srun needs no MPI at all.
#pragma once

#include <string>
#include <vector>

namespace treering::cli {

class SweepRanks {
 public:
  // Rank and size from the launcher's environment (Open MPI's OMPI_COMM_WORLD_*, PMI_*, Slurm's SLURM_PROCID
  // and SLURM_STEP_NUM_TASKS); rank 0 of 1 when there is none. `output` is the file rank 0 will write.
  explicit SweepRanks(std::string output);

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank passes its pieces; rank 0 gets all ranks' pieces, rank by rank, once each has written them to
  // OUTPUT.part-R-of-N[.JOB] (removed after). Others get an empty list. Throws std::runtime_error with a rank's
  // own error when it failed.
  std::vector<std::vector<std::string>> gather(const std::vector<std::string>& mine) const;
  // A rank that fails leaves its message where rank 0 looks for its pieces, so rank 0 does not wait forever.
  void report_failure(const std::string& message) const;

 private:
  std::string part_path(int rank) const;
  int rank_ = 0;
  int size_ = 1;
  std::string output_;
  std::string job_;  // the launcher's job id, when it gives one: parts of earlier runs are not mistaken for these
};

}  // namespace treering::cli
