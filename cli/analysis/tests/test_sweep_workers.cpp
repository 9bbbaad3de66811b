// The sweep's worker processes (cli/analysis/include/treering/analysis/sweep_workers.hpp): every item once, computed in
// other processes, its bytes back unchanged; errors as they were thrown, the lowest failed item's; a worker's death
// reported.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <map>
#include <new>
#include <set>
#include <stdexcept>

#include "treering/analysis/sweep_workers.hpp"
#include "treering/topologies/input_error.hpp"

using treering::analysis::run_in_worker_processes;
using treering::analysis::WorkerItems;

namespace {

// Items whose result is "ITEM_SQUARED\0\xff@PID" (a NUL and a high byte inside, to see they travel), unless
// `fail` throws or dies first; the results land in `received` (emptied).
WorkerItems squares(std::size_t count, int workers, std::map<std::size_t, std::string>& received,
                    std::function<void(std::size_t)> fail = {}) {
  received.clear();
  WorkerItems items;
  items.count = count;
  items.workers = workers;
  items.compute = [fail](std::size_t item) {
    if (fail) fail(item);
    return std::to_string(item * item) + std::string("\0\xff@", 3) + std::to_string(::getpid());
  };
  items.receive = [&received](std::size_t item, const std::string& bytes) {
    CHECK(received.count(item) == 0);
    received[item] = bytes;
  };
  items.describe = [](std::size_t item) { return "item " + std::to_string(item); };
  return items;
}

// Every worker has been reaped: this process has no child left, not even a zombie.
bool no_children_left() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

}  // namespace

TEST_CASE("worker processes: every item once, computed in another process, its bytes back unchanged") {
  std::map<std::size_t, std::string> received;
  run_in_worker_processes(squares(20, 3, received));
  REQUIRE(received.size() == 20);
  std::set<std::string> pids;
  for (const auto& [item, bytes] : received) {
    const std::string expected_head = std::to_string(item * item) + std::string("\0\xff@", 3);
    REQUIRE(bytes.rfind(expected_head, 0) == 0);
    const std::string pid = bytes.substr(expected_head.size());
    CHECK(pid != std::to_string(::getpid()));
    pids.insert(pid);
  }
  CHECK(pids.size() == 3);  // each of the 3 workers starts with one item of its own
}

TEST_CASE("worker processes: more workers than items, and no items at all") {
  std::map<std::size_t, std::string> received;
  run_in_worker_processes(squares(2, 8, received));
  CHECK(received.size() == 2);
  CHECK(no_children_left());
  run_in_worker_processes(squares(0, 8, received));
  CHECK(received.empty());
}

TEST_CASE("worker processes: an item's error comes back as it was thrown") {
  std::map<std::size_t, std::string> received;
  auto fail_at_3 = [&](std::function<void()> thrower) {
    return squares(6, 2, received, [thrower](std::size_t item) {
      if (item == 3) thrower();
    });
  };
  CHECK_THROWS_WITH_AS(
      run_in_worker_processes(fail_at_3([] { throw treering::topologies::InputError("bad length 3"); })),
      "bad length 3", treering::topologies::InputError);
  // A std::invalid_argument that is not an InputError is a bug, as any other exception: it comes back as one.
  CHECK_THROWS_WITH_AS(run_in_worker_processes(fail_at_3([] { throw std::invalid_argument("stoi"); })), "stoi",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(run_in_worker_processes(fail_at_3([] { throw std::logic_error("past the last round"); })),
                       "past the last round", std::runtime_error);
  CHECK_THROWS_AS(run_in_worker_processes(fail_at_3([] { throw std::bad_alloc(); })), std::bad_alloc);
  CHECK_THROWS_WITH_AS(run_in_worker_processes(fail_at_3([] { throw 42; })), "an unknown error", std::runtime_error);
  try {
    run_in_worker_processes(fail_at_3([] { throw treering::topologies::InputError({"w.yaml", 4, 7}, "no heads"); }));
    FAIL("no error");
  } catch (const treering::topologies::InputError& error) {
    CHECK(std::string(error.what()) == "w.yaml:4:7: error: no heads");  // FILE:LINE:COL: error: MESSAGE
    CHECK(error.location().file == "w.yaml");
    CHECK(error.location().line == 4);
    CHECK(error.location().column == 7);
    CHECK(error.message() == "no heads");
  }
}

TEST_CASE("worker processes: the lowest failed item's error, as one process going in order would throw") {
  // Items 5 and up fail. Items go out in order, so when any fails, 0..5 have all gone out; those still being
  // computed are waited for: 5's error is always among those seen, and the lowest.
  std::map<std::size_t, std::string> received;
  auto items = squares(12, 3, received, [](std::size_t item) {
    if (item >= 5) throw treering::topologies::InputError("item " + std::to_string(item) + " failed");
  });
  CHECK_THROWS_WITH_AS(run_in_worker_processes(items), "item 5 failed", treering::topologies::InputError);
  for (std::size_t item = 0; item < 5; ++item) CHECK(received.count(item) == 1);
}

TEST_CASE("worker processes: a worker that dies is reported with the item it was computing") {
  std::map<std::size_t, std::string> received;
  auto killed = squares(5, 2, received, [](std::size_t item) {
    if (item == 2) ::raise(SIGKILL);
  });
  CHECK_THROWS_WITH_AS(run_in_worker_processes(killed),
                       "a sweep worker process died (killed by signal 9, Killed) while computing item 2",
                       std::runtime_error);
  auto exited = squares(5, 2, received, [](std::size_t item) {
    if (item == 4) _exit(3);
  });
  CHECK_THROWS_WITH_AS(run_in_worker_processes(exited),
                       "a sweep worker process died (exit status 3) while computing item 4", std::runtime_error);
  CHECK(no_children_left());  // the other worker, too, was reaped
}

TEST_CASE("worker processes: an error receiving a result stops the workers and comes through") {
  std::map<std::size_t, std::string> received;
  WorkerItems items = squares(50, 2, received);
  items.receive = [](std::size_t item, const std::string&) {
    if (item == 1) throw std::runtime_error("cannot keep item 1");
  };
  CHECK_THROWS_WITH_AS(run_in_worker_processes(items), "cannot keep item 1", std::runtime_error);
  CHECK(no_children_left());
}
