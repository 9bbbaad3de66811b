// The SimGrid platform of a topology, and running a simulation in a child process.
#include "platform.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "treering/model/comm_group.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::sim {
namespace {

namespace sg4 = simgrid::s4u;
namespace topo = treering::topologies;

int fake_argc = 1;
char fake_name[] = "treering-sim";
char* fake_argv[] = {fake_name, nullptr};

void write_all(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written <= 0) _exit(3);
    bytes += written;
    size -= static_cast<size_t>(written);
  }
}

std::string read_all(int fd) {
  std::string data;
  char buffer[65536];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got > 0) {
      data.append(buffer, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      return data;
    }
  }
}

// Child: a status byte (0 results, 1 an InputError, 2 any other error), then the results, the InputError as
// topologies::encode_input_error writes it, or the error's message.
[[noreturn]] void child(int fd, const std::function<std::string()>& simulation) {
  try {
    const std::string values = simulation();
    const char ok = 0;
    write_all(fd, &ok, 1);
    write_all(fd, values.data(), values.size());
  } catch (const topologies::InputError& error) {
    const char bad_input = 1;
    const std::string encoded = topologies::encode_input_error(error);
    write_all(fd, &bad_input, 1);
    write_all(fd, encoded.data(), encoded.size());
  } catch (const std::exception& error) {
    const char failed = 2;
    write_all(fd, &failed, 1);
    write_all(fd, error.what(), std::strlen(error.what()));
  }
  ::close(fd);
  _exit(0);
}

}  // namespace

// The actors' stacks by default (the one that runs the ranks' programs, simgrid_network.hpp): room for the
// programs' deepest chains of calls; AddressSanitizer's frames are several times larger.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kActorStack_KiB = 2048;
#else
constexpr int kActorStack_KiB = 256;
#endif
constexpr int kMostGuardedActors = 8192;

int actor_guard_pages(double actors) { return actors <= kMostGuardedActors ? 1 : 0; }

SimulatedPlatform::SimulatedPlatform(const topo::Topology& topology, const Degradation* degradation, double actors)
    : engine_(std::make_unique<sg4::Engine>(&fake_argc, fake_argv)) {
  xbt_log_control_set("root.thres:critical");
  engine_->set_config("network/model:CM02");      // exactly latency + size / bandwidth
  engine_->set_config("network/crosstraffic:0");  // no acknowledgement traffic
  engine_->set_config("network/TCP-gamma:0");     // no TCP window cap
  engine_->set_config("contexts/guard-size:" +
                      std::to_string(actor_guard_pages(actors > 0 ? actors : topology.gpu_count())));
  engine_->set_config("contexts/stack-size:" + std::to_string(kActorStack_KiB));  // 8 MiB by default
  auto* zone = new TreeringZone("treering", topology,
                                degradation && !degradation->cables_down.empty() ? &degradation->cables_down : nullptr);
  sg4::NetZone* iface = zone->get_iface();
  for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) {
    hosts_.push_back(iface->create_host("gpu" + std::to_string(gpu), 1e15));
    zone->gpu_of_netpoint[hosts_.back()->get_netpoint()->id()] = gpu;
  }
  const model::LinkEfficiency efficiency = model::link_efficiency(topology);  // calibrated, if the cluster is
  for (topo::LinkId id = 0; id < topology.link_count(); ++id) {
    zone->links.push_back(
        iface->create_link("link" + std::to_string(id), link_units_per_s(topology, efficiency, degradation, id))
            ->set_latency(0)
            ->get_impl());
  }
  iface->seal();
}

SimulatedPlatform::~SimulatedPlatform() = default;

void SimulatedPlatform::run() { engine_->run(); }

std::string run_in_child(const std::function<std::string()>& simulation) {
  // The child inherits copies of unwritten stdio buffers; flush them first or output would appear twice.
  std::fflush(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("simulator: cannot create a pipe");
  const pid_t caller = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error("simulator: cannot fork");
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    // The caller killed (e.g. a sweep's worker process stopped): the simulation goes too, rather than running on
    // and holding the caller's inherited descriptors (the worker's socket) open.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != caller) _exit(4);
    child(pipe_fds[1], simulation);
  }
  ::close(pipe_fds[1]);
  std::string data;
  try {
    data = read_all(pipe_fds[0]);
  } catch (...) {  // e.g. out of memory: do not leave the child blocked on its write
    ::close(pipe_fds[0]);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || data.empty()) {
    throw std::runtime_error(
        "simulator: the simulation process died" +
        (WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")" : std::string()));
  }
  if (data[0] == 1) throw topologies::decode_input_error(data.substr(1));
  if (data[0] != 0) throw std::runtime_error("simulator: " + data.substr(1));
  return data.substr(1);
}

}  // namespace treering::sim
