#include "treering/analysis/sweep_workers.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <vector>

#include "treering/topologies/input_error.hpp"

namespace treering::analysis {
namespace {

constexpr int kWorkerFailed = 70;  // a worker's exit status when it could not even report an item's error

// A worker's reply to an item: the item (8 bytes), the outcome (1 byte), the payload's size (8 bytes), the
// payload: the result, or the error's message (an InputError's as "FILE\0LINE\0COLUMN\0MESSAGE").
enum class Outcome : std::uint8_t { result, input_error, invalid_argument, out_of_memory, other_error };
constexpr std::size_t kReplyHeaderBytes = 8 + 1 + 8;

struct Reply {
  std::uint64_t item = 0;
  Outcome outcome = Outcome::result;
  std::string payload;
};

// All of it, or false when the other end is gone (MSG_NOSIGNAL: an error, not a SIGPIPE that kills the sender).
bool send_all(int socket, const char* bytes, std::size_t size) {
  while (size > 0) {
    const ssize_t sent = ::send(socket, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes += sent;
    size -= static_cast<std::size_t>(sent);
  }
  return true;
}

// Exactly `size` bytes, or false when the stream ends (or fails) before.
bool receive_all(int socket, char* bytes, std::size_t size) {
  while (size > 0) {
    const ssize_t got = ::recv(socket, bytes, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    bytes += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

bool send_reply(int socket, const Reply& reply) {
  const std::uint64_t payload_bytes = reply.payload.size();
  char header[kReplyHeaderBytes];
  std::memcpy(header, &reply.item, 8);
  std::memcpy(header + 8, &reply.outcome, 1);
  std::memcpy(header + 9, &payload_bytes, 8);
  return send_all(socket, header, sizeof header) && send_all(socket, reply.payload.data(), reply.payload.size());
}

// A whole reply, or nothing when the worker's end closed first (it died) or it sent what no worker sends.
std::optional<Reply> receive_reply(int socket) {
  char header[kReplyHeaderBytes];
  if (!receive_all(socket, header, sizeof header)) return std::nullopt;
  Reply reply;
  std::uint64_t payload_bytes = 0;
  std::memcpy(&reply.item, header, 8);
  std::memcpy(&reply.outcome, header + 8, 1);
  std::memcpy(&payload_bytes, header + 9, 8);
  if (reply.outcome > Outcome::other_error || payload_bytes > (std::uint64_t{1} << 32)) return std::nullopt;
  reply.payload.resize(payload_bytes);
  if (!receive_all(socket, reply.payload.data(), reply.payload.size())) return std::nullopt;
  return reply;
}

Reply compute_reply(const WorkerItems& items, std::uint64_t item) {
  Reply reply{item, Outcome::result, {}};
  try {
    reply.payload = items.compute(item);
  } catch (const topologies::InputError& error) {
    const topologies::InputLocation& where = error.location();
    reply.outcome = Outcome::input_error;
    reply.payload =
        where.file + '\0' + std::to_string(where.line) + '\0' + std::to_string(where.column) + '\0' + error.message();
    if (!error.located()) reply = {item, Outcome::invalid_argument, error.what()};  // an input error without a place
  } catch (const std::bad_alloc&) {
    reply = {item, Outcome::out_of_memory, {}};
  } catch (const std::exception& error) {
    reply = {item, Outcome::other_error, error.what()};
  } catch (...) {
    reply = {item, Outcome::other_error, "an unknown error"};
  }
  return reply;
}

// A worker: items in, replies out, until this process closes its end.
[[noreturn]] void serve(int socket, const WorkerItems& items) {
  try {
    std::uint64_t item = 0;
    while (receive_all(socket, reinterpret_cast<char*>(&item), sizeof item)) {
      if (!send_reply(socket, compute_reply(items, item))) break;
    }
  } catch (...) {  // out of memory even for the error's reply: this process reports the worker's death
    _exit(kWorkerFailed);
  }
  _exit(0);
}

std::string death_message(int status, const std::string& item) {
  std::string how = "its exit status is unknown";
  if (WIFSIGNALED(status))
    how = "killed by signal " + std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) how = "exit status " + std::to_string(WEXITSTATUS(status));
  return "a sweep worker process died (" + how + ") while computing " + item;
}

// The failed item, its outcome and payload, as a worker replied (a death: other_error and its message).
[[noreturn]] void rethrow(const Reply& failure) {
  switch (failure.outcome) {
    case Outcome::input_error: {
      std::vector<std::string> parts(1);  // file, line, column, message
      for (char ch : failure.payload) {
        if (ch == '\0' && parts.size() < 4) {
          parts.emplace_back();
        } else {
          parts.back().push_back(ch);
        }
      }
      parts.resize(4);
      throw topologies::InputError({parts[0], std::atoi(parts[1].c_str()), std::atoi(parts[2].c_str())}, parts[3]);
    }
    case Outcome::invalid_argument: throw topologies::InputError(failure.payload);
    case Outcome::out_of_memory: throw std::bad_alloc();
    default: throw std::runtime_error(failure.payload);
  }
}

struct Worker {
  pid_t pid = -1;
  int socket = -1;                  // this process's end; -1 once the worker is retired
  std::optional<std::size_t> item;  // the item it is computing
};

// The workers; the destructor kills and reaps those not retired (after an error here).
class WorkerPool {
 public:
  explicit WorkerPool(std::size_t count) { workers_.reserve(count); }  // no allocation between a fork and its record
  ~WorkerPool() {
    for (Worker& worker : workers_) {
      if (worker.socket < 0) continue;
      ::kill(worker.pid, SIGKILL);
      retire(worker);
    }
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  std::vector<Worker>& workers() { return workers_; }
  bool busy() const {
    return std::any_of(workers_.begin(), workers_.end(), [](const Worker& worker) { return worker.socket >= 0; });
  }
  void hand_out(Worker& worker, std::size_t item) {
    worker.item = item;
    const std::uint64_t wire = item;
    send_all(worker.socket, reinterpret_cast<const char*>(&wire),
             sizeof wire);  // a dead worker: its end of stream tells
  }
  // Closes this end (the worker, waiting for an item, leaves) and reaps it: its wait status.
  int retire(Worker& worker) {
    ::close(worker.socket);
    worker.socket = -1;
    int status = 0;
    while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {}
    return status;
  }
  // A worker with something to read: a reply, or the end of its stream.
  Worker& wait_for_reply();
  void start(const WorkerItems& items);

 private:
  std::vector<Worker> workers_;
};

void WorkerPool::start(const WorkerItems& items) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    throw std::runtime_error("sweep: cannot create a socket pair");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    throw std::runtime_error("sweep: cannot start a worker process (fork: " + std::string(std::strerror(errno)) + ")");
  }
  if (pid == 0) {
    ::close(ends[0]);
    for (const Worker& earlier : workers_) ::close(earlier.socket);  // else its end of stream never comes
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // this process killed: the worker goes too, not finishing its item
    if (::getppid() != parent) _exit(kWorkerFailed);
    std::signal(SIGINT, SIG_DFL);  // Ctrl-C stops the workers even when the caller handles it (Python does)
    std::signal(SIGTERM, SIG_DFL);
    serve(ends[1], items);
  }
  ::close(ends[1]);
  workers_.push_back({pid, ends[0], std::nullopt});
}

Worker& WorkerPool::wait_for_reply() {
  std::vector<pollfd> polled;
  for (const Worker& worker : workers_) {
    if (worker.socket >= 0) polled.push_back({worker.socket, POLLIN, 0});
  }
  while (::poll(polled.data(), polled.size(), -1) < 0) {
    if (errno != EINTR) throw std::runtime_error("sweep: poll: " + std::string(std::strerror(errno)));
  }
  const auto ready = std::find_if(polled.begin(), polled.end(), [](const pollfd& entry) { return entry.revents != 0; });
  return *std::find_if(workers_.begin(), workers_.end(),
                       [&](const Worker& worker) { return worker.socket == ready->fd; });
}

}  // namespace

void run_in_worker_processes(const WorkerItems& items) {
  if (items.count == 0) return;
  // A worker's simulations flush stdio before they fork (sim::run_in_child): what this process has not written
  // yet would be written by every worker too.
  std::fflush(nullptr);
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(std::max(items.workers, 1)), items.count);
  WorkerPool pool(workers);
  for (std::size_t w = 0; w < workers; ++w) pool.start(items);
  std::size_t next = 0;
  std::optional<Reply> failure;  // the lowest item that failed
  auto note_failure = [&failure](Reply reply) {
    if (!failure || reply.item < failure->item) failure = std::move(reply);
  };
  for (Worker& worker : pool.workers()) pool.hand_out(worker, next++);  // as many workers as items, at most
  while (pool.busy()) {
    Worker& worker = pool.wait_for_reply();
    const std::size_t item = *worker.item;
    std::optional<Reply> reply = receive_reply(worker.socket);
    if (!reply || reply->item != item) {
      note_failure({item, Outcome::other_error, death_message(pool.retire(worker), items.describe(item))});
      continue;
    }
    worker.item.reset();
    if (reply->outcome == Outcome::result) {
      items.receive(item, reply->payload);
    } else {
      note_failure(std::move(*reply));
    }
    if (!failure && next < items.count) {
      pool.hand_out(worker, next++);
    } else {
      pool.retire(worker);
    }
  }
  if (failure) rethrow(*failure);
}

}  // namespace treering::analysis
