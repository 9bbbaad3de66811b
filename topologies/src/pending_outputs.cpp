#include "pending_outputs.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "treering/topologies/output_file.hpp"

namespace treering::topologies {

namespace {

// A fixed table, as a signal handler may neither allocate nor lock. A slot is claimed (state 1), filled, then
// published (state 2); the handler only reads published slots. owner: the process that wrote the temporary, so
// that a sweep's worker (forked, so holding a copy of this table) killed by SIGTERM does not remove its parent's.
constexpr int kSlots = 32;
constexpr std::size_t kMostPathBytes = 4096;
struct PendingOutput {
  std::atomic<int> state{0};
  pid_t owner = 0;
  char path[kMostPathBytes] = {};
};
PendingOutput pending[kSlots];

void remove_pending_and_reraise(int signal_number) {
  const pid_t self = ::getpid();
  for (PendingOutput& output : pending) {
    if (output.state.load() == 2 && output.owner == self) ::unlink(output.path);
  }
  std::signal(signal_number, SIG_DFL);  // then die of the signal as if no handler had been there
  std::raise(signal_number);
}

}  // namespace

int note_pending_output(const std::string& temporary_path) {
  if (temporary_path.size() >= kMostPathBytes) return -1;
  for (int slot = 0; slot < kSlots; ++slot) {
    int free_state = 0;
    if (!pending[slot].state.compare_exchange_strong(free_state, 1)) continue;
    pending[slot].owner = ::getpid();
    std::memcpy(pending[slot].path, temporary_path.c_str(), temporary_path.size() + 1);
    pending[slot].state.store(2);
    return slot;
  }
  return -1;
}

void forget_pending_output(int slot) {
  if (slot >= 0 && slot < kSlots) pending[slot].state.store(0);
}

void remove_unfinished_outputs_on_signals() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action {};
    action.sa_handler = remove_pending_and_reraise;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace treering::topologies
