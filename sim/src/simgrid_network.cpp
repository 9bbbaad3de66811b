// SimGrid's flow network (simgrid_network.hpp).
#include "simgrid_network.hpp"

#include <simgrid/s4u.hpp>

#include <cmath>
#include <stdexcept>

#include "treering/sim/engine_info.hpp"

namespace treering::sim::detail {
namespace {

namespace sg4 = simgrid::s4u;

int flow_payload = 0;  // what every flow carries (its size is simulated)

}  // namespace

SimGridNetwork::SimGridNetwork(const topologies::Topology& topology, const Degradation* degradation, double actors)
    : platform_(topology, degradation, actors), wake_driver_(sg4::Semaphore::create(0)) {}

double SimGridNetwork::now() const { return sg4::Engine::get_clock(); }

std::string SimGridNetwork::name() const { return "SimGrid " + simgrid_version(); }

// The sender puts the flow's units into the flow's mailbox (its tag's: no other flow under way has it) at its
// rate cap; the receiver takes them and tells the driver.
void SimGridNetwork::start_flow(int src_gpu, int dst_gpu, const std::vector<topologies::LinkId>&, double units,
                                double cap_units_per_s, int tag) {
  ++in_flight_;
  sg4::Mailbox* box = sg4::Mailbox::by_name("f" + std::to_string(tag));
  const auto size = static_cast<uint64_t>(std::llround(units));
  sg4::Actor::init("put", platform_.host(src_gpu))
      ->set_stacksize(kFlowActorStack_KiB)
      ->start([box, size, cap_units_per_s] {
        sg4::CommPtr comm = box->put_init(&flow_payload, size);
        if (cap_units_per_s > 0) comm->set_rate(cap_units_per_s);
        comm->wait();
      });
  sg4::Actor::init("get", platform_.host(dst_gpu))->set_stacksize(kFlowActorStack_KiB)->start([this, box, tag] {
    box->get<int>();
    arrived_.push_back(tag);
    wake_driver_->release();
  });
}

// What is due at this instant: the flows that arrived, then the wake-ups due within kSameInstant_s, in their order.
bool SimGridNetwork::handle_instant(FlowClient& client) {
  const double now_s = now();
  const bool timer_due = !timers_.empty() && timers_.top().at_s - now_s < kSameInstant_s;
  if (arrived_.empty() && !timer_due) return false;
  std::vector<Timer> due;
  while (!timers_.empty() && timers_.top().at_s - now_s < kSameInstant_s) {
    due.push_back(timers_.top());
    timers_.pop();
  }
  std::deque<int> arrived;
  arrived.swap(arrived_);
  for (int tag : arrived) {
    --in_flight_;
    client.on_flow_done(tag);
  }
  for (const Timer& timer : due) client.on_wakeup(timer.wakeup);
  return true;
}

// The driver: the client's instants one after another, sleeping in between until the next wake-up or arrival.
void SimGridNetwork::drive(FlowClient& client) {
  client.begin();
  while (true) {
    if (handle_instant(client)) continue;
    if (timers_.empty() && in_flight_ == 0) return;
    if (timers_.empty()) {
      wake_driver_->acquire();
    } else {
      wake_driver_->acquire_timeout(timers_.top().at_s - now());
    }
  }
}

void SimGridNetwork::run(FlowClient& client) {
  sg4::Actor::create("driver", platform_.host(0), [this, &client] {
    try {
      drive(client);
    } catch (...) {  // one escaping an actor would abort SimGrid
      failure_ = std::current_exception();
    }
  });
  platform_.run();
  if (failure_) std::rethrow_exception(failure_);
}

}  // namespace treering::sim::detail
