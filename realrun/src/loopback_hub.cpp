#include "loopback_hub.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

namespace treering::realrun::detail {
namespace {

std::chrono::steady_clock::time_point deadline(double timeout_s) {
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
}

}  // namespace

LoopbackHub::LoopbackHub(int ranks, double timeout_s)
    : ranks_(ranks), timeout_s_(timeout_s), sends_(static_cast<size_t>(ranks) * static_cast<size_t>(ranks)), dones_(sends_.size()) {
  if (ranks < 1) throw std::invalid_argument("a loopback run needs at least one virtual rank");
  if (!(timeout_s > 0)) throw std::invalid_argument("a loopback run's timeout must be positive");
}

LoopbackHub::Queue& LoopbackHub::queue(std::vector<Queue>& queues, int from, int to) {
  if (from < 0 || from >= ranks_ || to < 0 || to >= ranks_) {
    throw std::invalid_argument("loopback: no virtual rank " + std::to_string(from < 0 || from >= ranks_ ? from : to));
  }
  return queues[static_cast<size_t>(from) * static_cast<size_t>(ranks_) + static_cast<size_t>(to)];
}

void LoopbackHub::post_send(int from, int to, Posting posting) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    queue(sends_, from, to).push_back(posting);
  }
  changed_.notify_all();
}

void LoopbackHub::post_done(int from, int to, void* event) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    queue(dones_, from, to).push_back({nullptr, 0, event});
  }
  changed_.notify_all();
}

LoopbackHub::Posting LoopbackHub::take(std::vector<Queue>& queues, int from, int to, int waiter, int peer, const char* what) {
  std::unique_lock<std::mutex> lock(mutex_);
  Queue& pending = queue(queues, from, to);
  if (!changed_.wait_until(lock, deadline(timeout_s_), [&] { return aborted_ || !pending.empty(); })) {
    throw std::runtime_error("virtual rank " + std::to_string(waiter) + ": no " + what + " from virtual rank " + std::to_string(peer) +
                             " within " + std::to_string(timeout_s_) + " s (it stalled, or the plan's sends and receives do not match)");
  }
  if (aborted_) throw std::runtime_error("virtual rank " + std::to_string(waiter) + ": stopped, another virtual rank failed");
  const Posting posting = pending.front();
  pending.pop_front();
  return posting;
}

LoopbackHub::Posting LoopbackHub::take_send(int from, int to) { return take(sends_, from, to, to, from, "message"); }

void* LoopbackHub::take_done(int from, int to) { return take(dones_, from, to, from, to, "receipt").event; }

void LoopbackHub::barrier(int rank) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (aborted_) throw std::runtime_error("virtual rank " + std::to_string(rank) + ": stopped, another virtual rank failed");
  const long long mine = generation_;
  if (++arrived_ == ranks_) {
    arrived_ = 0;
    ++generation_;
    lock.unlock();
    changed_.notify_all();
    return;
  }
  if (!changed_.wait_until(lock, deadline(timeout_s_), [&] { return aborted_ || generation_ != mine; })) {
    throw std::runtime_error("virtual rank " + std::to_string(rank) + ": the other virtual ranks did not reach the barrier within " +
                             std::to_string(timeout_s_) + " s");
  }
  if (aborted_) throw std::runtime_error("virtual rank " + std::to_string(rank) + ": stopped, another virtual rank failed");
}

void LoopbackHub::abort() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
  }
  changed_.notify_all();
}

}  // namespace treering::realrun::detail
