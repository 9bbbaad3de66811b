// Independent items computed in worker processes: the sweep's parallelism (sweep.hpp) without threads.
//
// A simulation runs in a forked child (SimGrid keeps one engine per process), and a child forked from a process
// with several threads may only make async-signal-safe calls until it execs: a lock another thread held at the
// fork (the allocator's, stdio's) stays locked in it forever. So the sweep starts its workers with fork() before
// any thread exists, each a single-threaded process that computes its items one after another (its simulations
// forking from it, single-threaded too), and this process hands the items out one at a time as workers finish
// (long and short items balance) and receives the results, both through one socket pair per worker. Nothing here
// creates a thread: when the caller is single-threaded, as the `treering` command is, no fork anywhere happens in
// a process with more than one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace treering::analysis {

struct WorkerItems {
  std::size_t count = 0;  // the items are 0 .. count - 1
  int workers = 1;        // processes (at most count of them start)
  // In a worker: the item's result as bytes. What it throws comes back (see run_in_worker_processes).
  std::function<std::string(std::size_t item)> compute;
  // Here, one result at a time, in the order they arrive.
  std::function<void(std::size_t item, const std::string& bytes)> receive;
  // "case 3 (...)": what the message about a worker that died names.
  std::function<std::string(std::size_t item)> describe;
};

// Computes every item in worker processes forked from this one and passes each result to `receive`. When items
// fail, no more are handed out; once those being computed are done, the error of the lowest failed item is
// thrown here, as the item threw it: topologies::InputError (same location and message), std::invalid_argument
// and std::bad_alloc as themselves, any other error as std::runtime_error with its message; these are the errors
// computing the items in order, one by one, would have thrown first. A worker that dies (a signal, an exit)
// is a std::runtime_error naming the item it was computing. What `receive` throws stops the workers (killed)
// and propagates. The workers leave with _exit: no destructors, atexit handlers or stdio flushes of this
// process's state run twice.
void run_in_worker_processes(const WorkerItems& items);

}  // namespace treering::analysis
