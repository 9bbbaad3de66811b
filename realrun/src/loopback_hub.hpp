// Where the virtual ranks of a loopback run meet (the cuda backend's one-GPU mode: P ranks as host threads and
// streams on one device). Host-side only, no CUDA types, so it is tested on the CPU. A sender posts what it sends
// (device pointer, bytes, and the event after which the data is ready) for the pair (from, to); the receiver takes
// the postings of a pair in the order they were posted, copies, and posts back the event after which the copy is
// done, which the sender takes before it reuses its buffer. Every wait has a deadline and names the peer it waited
// for. Private to realrun.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

namespace treering::realrun::detail {

class LoopbackHub {
 public:
  struct Posting {
    const void* data = nullptr;
    std::size_t bytes = 0;
    void* event = nullptr;  // a cudaEvent_t, opaque here
  };

  LoopbackHub(int ranks, double timeout_s);
  int ranks() const { return ranks_; }

  void post_send(int from, int to, Posting posting);  // never blocks
  Posting take_send(int from, int to);                // the oldest posting from `from` to `to`; waits for it
  void post_done(int from, int to, void* event);      // the receiver `to` copied the oldest send from `from`
  void* take_done(int from, int to);                  // the sender `from` waits for it
  void barrier(int rank);                             // all ranks; reusable
  void abort();                                       // a rank failed: every wait, now or later, throws at once

 private:
  using Queue = std::deque<Posting>;
  Queue& queue(std::vector<Queue>& queues, int from, int to);
  Posting take(std::vector<Queue>& queues, int from, int to, int waiter, int peer, const char* what);

  int ranks_;
  double timeout_s_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Queue> sends_, dones_;  // [from * ranks + to]
  int arrived_ = 0;
  long long generation_ = 0;
  bool aborted_ = false;
};

}  // namespace treering::realrun::detail
