// simulate_flows: builds the platform and runs the flows in a child process, results back through a pipe.
#include "treering/sim/flows.hpp"

#include <simgrid/s4u.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "treering/model/comm_group.hpp"
#include "treering_zone.hpp"

namespace treering::sim {
namespace {

namespace sg4 = simgrid::s4u;
namespace topo = treering::topologies;

// The bandwidth a flow gets alone on a link: nominal x the model's efficiency for the link's tier.
double effective_Bps(const topo::Link& link) {
  return link.bandwidth_Bps *
         (link.tier == topo::Tier::scale_up ? model::kScaleUpEfficiency : model::kScaleOutEfficiency);
}

// In the child: build the platform, run every flow as an actor, return the finish times.
std::vector<double> run_engine(const topo::Topology& topology, const std::vector<Flow>& flows) {
  xbt_log_control_set("root.thres:critical");
  int argc = 1;
  char name[] = "treering-sim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  engine.set_config("network/model:CM02");     // exactly latency + size / bandwidth
  engine.set_config("network/crosstraffic:0");  // no acknowledgement traffic
  engine.set_config("network/TCP-gamma:0");     // no TCP window cap
  auto* zone = new TreeringZone("treering", topology);
  sg4::NetZone* iface = zone->get_iface();
  std::vector<sg4::Host*> hosts;
  for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) {
    hosts.push_back(iface->create_host("gpu" + std::to_string(gpu), 1e15));
    zone->gpu_of_netpoint[hosts.back()->get_netpoint()->id()] = gpu;
  }
  for (topo::LinkId id = 0; id < topology.link_count(); ++id) {
    zone->links.push_back(
        iface->create_link("link" + std::to_string(id), effective_Bps(topology.link(id)))->set_latency(0)->get_impl());
  }
  iface->seal();
  std::vector<double> finish(flows.size(), 0.0);
  for (size_t i = 0; i < flows.size(); ++i) {
    sg4::Actor::create("flow" + std::to_string(i), hosts[static_cast<size_t>(flows[i].src_gpu)], [&, i] {
      const Flow& flow = flows[i];
      sg4::this_actor::sleep_until(flow.start_s);
      sg4::this_actor::sleep_for(flow.latency_s);
      if (flow.bytes > 0 && flow.src_gpu != flow.dst_gpu) {
        sg4::Comm::sendto(hosts[static_cast<size_t>(flow.src_gpu)], hosts[static_cast<size_t>(flow.dst_gpu)],
                          static_cast<uint64_t>(std::llround(flow.bytes)));
      }
      finish[i] = sg4::Engine::get_clock();
    });
  }
  engine.run();
  return finish;
}

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
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) data.append(buffer, static_cast<size_t>(got));
  return data;
}

// Child: status byte 0 and the doubles, or status 1 and an error message.
[[noreturn]] void child(int fd, const topo::Topology& topology, const std::vector<Flow>& flows) {
  try {
    const std::vector<double> finish = run_engine(topology, flows);
    const char ok = 0;
    write_all(fd, &ok, 1);
    write_all(fd, finish.data(), finish.size() * sizeof(double));
  } catch (const std::exception& error) {
    const char failed = 1;
    write_all(fd, &failed, 1);
    write_all(fd, error.what(), std::strlen(error.what()));
  }
  ::close(fd);
  _exit(0);
}

std::vector<double> run_in_child(const topo::Topology& topology, const std::vector<Flow>& flows) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("simulator: cannot create a pipe");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("simulator: cannot fork");
  if (pid == 0) {
    ::close(pipe_fds[0]);
    child(pipe_fds[1], topology, flows);
  }
  ::close(pipe_fds[1]);
  const std::string data = read_all(pipe_fds[0]);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || data.empty()) {
    throw std::runtime_error("simulator: the simulation process died" +
                             (WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")" : std::string()));
  }
  if (data[0] != 0) throw std::runtime_error("simulator: " + data.substr(1));
  if (data.size() != 1 + flows.size() * sizeof(double)) throw std::runtime_error("simulator: truncated results");
  std::vector<double> finish(flows.size());
  std::memcpy(finish.data(), data.data() + 1, finish.size() * sizeof(double));
  return finish;
}

}  // namespace

FlowSimulation simulate_flows(const topo::Topology& topology, const std::vector<Flow>& flows) {
  FlowSimulation result;
  result.link_bytes.assign(static_cast<size_t>(topology.link_count()), 0.0);
  for (const Flow& flow : flows) {
    const int gpus = topology.gpu_count();
    if (flow.src_gpu < 0 || flow.src_gpu >= gpus || flow.dst_gpu < 0 || flow.dst_gpu >= gpus) {
      throw std::invalid_argument("flow between GPUs " + std::to_string(flow.src_gpu) + " and " +
                                  std::to_string(flow.dst_gpu) + ": no such GPU");
    }
    if (!(flow.bytes >= 0) || !(flow.start_s >= 0) || !(flow.latency_s >= 0)) {
      throw std::invalid_argument("flow sizes, start times and latencies must not be negative");
    }
    for (topo::LinkId id : topology.route(flow.src_gpu, flow.dst_gpu).links) {
      result.link_bytes[static_cast<size_t>(id)] += flow.bytes;
    }
  }
  if (flows.empty()) return result;
  result.finish_s = run_in_child(topology, flows);
  for (double finish : result.finish_s) result.makespan_s = std::max(result.makespan_s, finish);
  return result;
}

}  // namespace treering::sim
