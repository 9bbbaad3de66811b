// A rank that stalls, for the test realrun/stalled-rank-times-out: launched beside treering-realrun in one MPMD
// job with the same arguments, it passes the start's check (the arguments' fingerprint, as every rank of
// treering-realrun does first) and then does nothing. The real rank's waits must give up after --timeout and
// abort the job (which ends this one too) rather than hang.
#include <chrono>
#include <thread>

#include "mpi_transport.hpp"

int main(int argc, char** argv) {
  treering::realrun::app::MpiSession session(argc, argv);
  const treering::realrun::app::MpiTransport transport;
  if (!transport.same_on_all_ranks(treering::realrun::app::arguments_fingerprint(argc, argv))) return 2;
  std::this_thread::sleep_for(std::chrono::hours(1));  // stalled: the job's abort ends it
  return 1;
}
