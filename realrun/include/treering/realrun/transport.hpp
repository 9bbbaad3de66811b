// How the ranks of a real run exchange bytes: MPI in treering-realrun, threads of one process in the tests.
// Non-blocking sends and receives of raw bytes, waits, a barrier and a wall clock; the executor counts the bytes
// it hands to send().
#pragma once

#include <cstddef>
#include <functional>

namespace treering::realrun {

class Transport {
 public:
  using Request = int;
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // The buffer must stay as it is until the request is waited for. Messages between two ranks with one tag
  // arrive in the order they were sent.
  virtual Request isend(const void* data, std::size_t bytes, int to, int tag) = 0;
  virtual Request irecv(void* data, std::size_t bytes, int from, int tag) = 0;
  virtual void wait(Request request) = 0;
  virtual void barrier() = 0;
  virtual double now_s() const = 0;  // wall clock, seconds
};

// Runs `body` on `ranks` threads of this process, each with a transport to the others (for tests, and for
// trying algorithms without MPI). Rethrows the first exception a rank threw.
void run_local_ranks(int ranks, const std::function<void(Transport&)>& body);

}  // namespace treering::realrun
