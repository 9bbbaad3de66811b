// The loopback mode's meeting point on the CPU: postings of a pair arrive in order, receipts go back to the
// sender, the barrier holds every rank, and a missing peer is named after the deadline instead of a hang.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../src/loopback_hub.hpp"

using treering::realrun::detail::LoopbackHub;

TEST_CASE("loopback hub: a ring of 4 threads exchanges postings in order and gets every receipt back") {
  LoopbackHub hub(4, 30);
  std::vector<int> tokens(4 * 3);  // stand-ins for device buffers: their addresses travel
  std::vector<std::vector<const void*>> received(4);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 4; ++rank) {
    threads.emplace_back([&, rank] {
      const int next = (rank + 1) % 4, previous = (rank + 3) % 4;
      for (int round = 0; round < 3; ++round) {  // all sends posted before any wait: no deadlock
        hub.post_send(rank, next, {&tokens[static_cast<size_t>(rank * 3 + round)], 8u * static_cast<size_t>(round + 1), nullptr});
      }
      for (int round = 0; round < 3; ++round) {
        const LoopbackHub::Posting posting = hub.take_send(previous, rank);
        CHECK(posting.bytes == 8u * static_cast<size_t>(round + 1));
        received[static_cast<size_t>(rank)].push_back(posting.data);
        hub.post_done(previous, rank, &tokens[static_cast<size_t>(rank * 3 + round)]);
      }
      for (int round = 0; round < 3; ++round) CHECK(hub.take_done(rank, next) == &tokens[static_cast<size_t>(next * 3 + round)]);
      hub.barrier(rank);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int rank = 0; rank < 4; ++rank) {
    const int previous = (rank + 3) % 4;
    for (int round = 0; round < 3; ++round) {
      CHECK(received[static_cast<size_t>(rank)][static_cast<size_t>(round)] == &tokens[static_cast<size_t>(previous * 3 + round)]);
    }
  }
}

TEST_CASE("loopback hub: the barrier waits for every rank, and is reusable") {
  LoopbackHub hub(3, 30);
  std::atomic<int> before{0};
  std::atomic<bool> early{false};
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank) {
    threads.emplace_back([&, rank] {
      for (int round = 1; round <= 5; ++round) {
        ++before;
        hub.barrier(rank);
        if (before.load() < 3 * round) early = true;  // someone passed before all had arrived
        hub.barrier(rank);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK_FALSE(early.load());
}

TEST_CASE("loopback hub: a missing peer is named after the deadline, bad ranks and timeouts are refused") {
  LoopbackHub hub(2, 0.05);
  try {
    hub.take_send(1, 0);
    FAIL("no exception");
  } catch (const std::runtime_error& error) {
    CHECK(std::string(error.what()).find("virtual rank 0: no message from virtual rank 1") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(hub.barrier(0), doctest::Contains("did not reach the barrier"), std::runtime_error);
  CHECK_THROWS_AS(hub.post_send(0, 2, {}), std::invalid_argument);
  CHECK_THROWS_AS(LoopbackHub(0, 1), std::invalid_argument);
  CHECK_THROWS_AS(LoopbackHub(2, 0), std::invalid_argument);
}

TEST_CASE("loopback hub: after abort every wait stops at once, with no deadline to run out") {
  LoopbackHub hub(2, 3600);
  std::thread waiter([&] { CHECK_THROWS_WITH_AS(hub.take_send(1, 0), doctest::Contains("another virtual rank failed"), std::runtime_error); });
  hub.abort();
  waiter.join();
  CHECK_THROWS_WITH_AS(hub.barrier(1), doctest::Contains("another virtual rank failed"), std::runtime_error);
  CHECK_THROWS_AS(hub.take_done(0, 1), std::runtime_error);
}
