// Ranks as threads of one process (transport.hpp): a mailbox per (from, to, tag) of byte messages; a send
// copies its bytes at once (so it completes immediately), a receive waits for its message.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "treering/realrun/transport.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun {
namespace {

struct PostOffice {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<char>>> boxes;  // (from, to, tag)
  int waiting_at_barrier = 0;
  long long barrier_round = 0;
  bool failed = false;
  std::exception_ptr first_error;  // the rank that failed first (the others then fail waiting for it)
};

class LocalTransport : public Transport {
 public:
  LocalTransport(PostOffice& office, int rank, int ranks) : office_(office), rank_(rank), ranks_(ranks) {}
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }

  Request isend(const void* data, std::size_t bytes, int to, int tag) override {
    check_peer(to);
    std::vector<char> message(bytes);
    if (bytes > 0) std::memcpy(message.data(), data, bytes);
    {
      std::lock_guard<std::mutex> lock(office_.mutex);
      office_.boxes[{rank_, to, tag}].push_back(std::move(message));
    }
    office_.changed.notify_all();
    return -1;  // done
  }

  Request irecv(void* data, std::size_t bytes, int from, int tag) override {
    check_peer(from);
    receives_.push_back({data, bytes, from, tag});
    return static_cast<Request>(receives_.size() - 1);
  }

  void wait(Request request) override {
    if (request < 0) return;
    const Receive& r = receives_.at(static_cast<size_t>(request));
    std::unique_lock<std::mutex> lock(office_.mutex);
    auto& box = office_.boxes[{r.from, rank_, r.tag}];
    office_.changed.wait(lock, [&] { return !box.empty() || office_.failed; });
    if (office_.failed) throw std::runtime_error("another rank failed");
    if (box.front().size() != r.bytes) {
      throw std::runtime_error("rank " + std::to_string(rank_) + " expected " + std::to_string(r.bytes) +
                               " bytes from rank " + std::to_string(r.from) + ", got " +
                               std::to_string(box.front().size()));
    }
    if (r.bytes > 0) std::memcpy(r.data, box.front().data(), r.bytes);
    box.pop_front();
  }

  void barrier() override {
    std::unique_lock<std::mutex> lock(office_.mutex);
    const long long round = office_.barrier_round;
    if (++office_.waiting_at_barrier == ranks_) {
      office_.waiting_at_barrier = 0;
      ++office_.barrier_round;
      office_.changed.notify_all();
      return;
    }
    office_.changed.wait(lock, [&] { return office_.barrier_round != round || office_.failed; });
    if (office_.failed) throw std::runtime_error("another rank failed");
  }

  double now_s() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

 private:
  struct Receive {
    void* data;
    std::size_t bytes;
    int from;
    int tag;
  };
  void check_peer(int peer) const {
    if (peer < 0 || peer >= ranks_) throw std::logic_error("no rank " + std::to_string(peer));
  }
  PostOffice& office_;
  int rank_, ranks_;
  std::vector<Receive> receives_;
};

}  // namespace

void run_local_ranks(int ranks, const std::function<void(Transport&)>& body) {
  if (ranks < 1) throw topologies::InputError("at least one rank");
  PostOffice office;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      LocalTransport transport(office, rank, ranks);
      try {
        body(transport);
      } catch (...) {
        std::lock_guard<std::mutex> lock(office.mutex);
        if (!office.first_error) office.first_error = std::current_exception();
        office.failed = true;
        office.changed.notify_all();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (office.first_error) std::rethrow_exception(office.first_error);
}

}  // namespace treering::realrun
