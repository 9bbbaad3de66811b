// The MPI transport of treering-realrun (transport.hpp over MPI_COMM_WORLD), and the few collective helpers
// the program itself needs outside the timed plans.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "treering/realrun/transport.hpp"

namespace treering::realrun::app {

class MpiTransport : public Transport {
 public:
  MpiTransport();
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  Request isend(const void* data, std::size_t bytes, int to, int tag) override;
  Request irecv(void* data, std::size_t bytes, int from, int tag) override;
  void wait(Request request) override;
  void barrier() override;
  double now_s() const override { return MPI_Wtime(); }

  // Waits give up after this long: the rank prints which peer it waited for and aborts the job (MPI_Abort),
  // rather than hanging with it (a crashed or stalled rank). Barriers too.
  void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout_s() const { return timeout_s_; }
  // Prints "error: MESSAGE; aborting" and ends every rank (MPI_Abort, exit code 3): for a hang found elsewhere
  // (a GPU stream that did not finish).
  [[noreturn]] void abort_job(const std::string& message) const;
  // Whether every rank passed the same value (e.g. a fingerprint of its command line).
  bool same_on_all_ranks(unsigned long long value) const;

  double max_over_ranks(double value) const;                                    // every rank gets it
  std::vector<double> max_over_ranks(const std::vector<double>& values) const;  // element by element
  std::vector<double> gather(double value) const;                               // rank 0 gets one per rank
  std::vector<float> gather(const std::vector<float>& values) const;  // rank 0: all, rank by rank (same sizes)
  std::string library_version() const;

 private:
  Request keep(MPI_Request request);  // a handle for it (slots are reused once waited for)
  void wait_or_abort(MPI_Request& request, const std::string& what);
  int rank_ = 0, ranks_ = 1;
  double timeout_s_ = 600;
  std::vector<std::string> what_;  // per request slot: "a receive from rank 3", for the timeout's message
  std::vector<MPI_Request> requests_;
  std::vector<int> free_;
};

// FNV-1a over the arguments (the program's path left out): equal on every rank of one launch, which
// MpiTransport::same_on_all_ranks checks first.
unsigned long long arguments_fingerprint(int argc, char** argv);

// MPI_Init / MPI_Finalize around the program's life.
struct MpiSession {
  MpiSession(int& argc, char**& argv) { MPI_Init(&argc, &argv); }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace treering::realrun::app
