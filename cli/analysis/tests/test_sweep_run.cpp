// run_sweep (cli/analysis/include/treering/analysis/sweep.hpp) with worker processes: the rows one process computes,
// bit for bit; its errors; and no fork from a process with more than one thread.
#include <doctest/doctest.h>
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>

#include "treering/analysis/sweep.hpp"
#include "treering/analysis/sweep_wire.hpp"

using treering::analysis::DecodeRow;
using treering::analysis::run_sweep;
using treering::analysis::SweepSpec;
namespace model = treering::model;

namespace {

// 2 node counts x 2 lengths x 2 algorithms x 2 engines = 16 cases, 8 of them simulated.
SweepSpec small_sweep() {
  SweepSpec spec;
  spec.cluster = "dgx-h100";
  spec.nodes = {1, 2};
  spec.seq_lens = {80'000, 160'000};
  spec.algorithms = {model::DecodeAlgorithm::ring, model::DecodeAlgorithm::tree};
  spec.engines = {treering::validate::Engine::model, treering::validate::Engine::sim};
  return spec;
}

std::vector<std::size_t> all_cases(const SweepSpec& spec) {
  std::vector<std::size_t> indices(treering::analysis::sweep_cases(spec).size());
  std::iota(indices.begin(), indices.end(), std::size_t{0});
  return indices;
}

// The threads of this process, as Linux counts them ("Threads:" in /proc/self/status).
int threads_now() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "Threads:") {
      int threads = 0;
      status >> threads;
      return threads;
    }
    status.ignore(1 << 16, '\n');
  }
  return -1;
}

// Counts of the forks made by this process and every process it forks, in memory they all share (MAP_SHARED
// survives fork); a pthread_atfork hook adds to them before each fork, in the forking process.
struct ForkCounts {
  std::atomic<int> forks{0};
  std::atomic<int> multithreaded_forks{0};  // from a process with more than one thread
};
ForkCounts* fork_counts = nullptr;

void count_fork() {
  if (!fork_counts) return;
  ++fork_counts->forks;
  if (threads_now() != 1) ++fork_counts->multithreaded_forks;
}

ForkCounts* shared_fork_counts() {
  static ForkCounts* counts = [] {
    void* memory = ::mmap(nullptr, sizeof(ForkCounts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory != MAP_FAILED);
    ::pthread_atfork(count_fork, nullptr, nullptr);
    return new (memory) ForkCounts;
  }();
  counts->forks = 0;
  counts->multithreaded_forks = 0;
  return counts;
}

}  // namespace

TEST_CASE("run_sweep: every fork is made by a single-threaded process (issue 9)") {
  REQUIRE(threads_now() == 1);  // the test itself starts from one thread
  fork_counts = shared_fork_counts();
  const SweepSpec spec = small_sweep();
  const std::vector<DecodeRow> rows = run_sweep(spec, all_cases(spec), 2);
  const int forks = fork_counts->forks, multithreaded = fork_counts->multithreaded_forks;
  fork_counts = nullptr;
  CHECK(rows.size() == 16);
  CHECK(forks >= 2);  // the workers (their simulations run in the event loop, inside them: no fork of their own)
  CHECK(multithreaded == 0);
}

TEST_CASE("run_sweep: rows from 3 worker processes are the rows of one process, bit for bit, in case order") {
  const SweepSpec spec = small_sweep();
  const std::vector<DecodeRow> here = run_sweep(spec, all_cases(spec), 1);
  std::vector<std::size_t> progress;
  const std::vector<DecodeRow> workers = run_sweep(spec, all_cases(spec), 3, [&](std::size_t done, std::size_t total) {
    CHECK(total == 16);
    progress.push_back(done);
  });
  REQUIRE(workers.size() == here.size());
  for (std::size_t i = 0; i < here.size(); ++i) {
    CAPTURE(i);
    CHECK(treering::analysis::encode_row(workers[i]) ==
          treering::analysis::encode_row(here[i]));  // every field, every bit
  }
  // The cases' order, engine fastest (sweep.hpp): case 5 is 1 node, 160k tokens, ring, sim.
  CHECK(workers[5].result.seq_len == 160'000);
  CHECK(workers[5].result.algorithm == model::DecodeAlgorithm::ring);
  CHECK(workers[5].engine == treering::validate::Engine::sim);
  CHECK(workers[5].result.gpus == 8);
  CHECK(progress == std::vector<std::size_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
}

TEST_CASE("run_sweep: a failing case is the same error from worker processes as from one process") {
  SweepSpec spec = small_sweep();
  spec.seq_lens = {80'000, 0};  // no CLI would pass 0 tokens: the plan refuses it, in the case itself
  for (int jobs : {1, 3}) {
    CAPTURE(jobs);
    CHECK_THROWS_WITH_AS(run_sweep(spec, all_cases(spec), jobs), "the sequence must hold at least one token",
                         std::invalid_argument);
  }
}
