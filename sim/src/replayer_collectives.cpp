// The replay's collectives: every rank arrives, waits the algorithm's latency, moves its flows (replayer.hpp).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "plan_traffic.hpp"
#include "replayer.hpp"

namespace treering::sim::detail {

void Replayer::post_flows(int rank, const CollectiveRun& collective, int phase) {
  std::vector<sg4::CommPtr> comms;
  std::vector<size_t> sent_flow;  // for sends: the flow; receives: none
  for (size_t i : collective.flows_of_rank[static_cast<size_t>(rank)]) {
    const model::CollectiveFlow& flow = collective.schedule->flows[i];
    comms.push_back(capped(mailbox('c', flow.from, flow.to)->put_init(&token, simulated_size(flow.wire_bytes)), flow.max_rate_Bps)->start());
    ++transfers;
    sent_flow.push_back(i);
  }
  const std::vector<size_t>& incoming = collective.flows_into_rank[static_cast<size_t>(rank)];
  std::vector<int*> received(incoming.size());  // where each receive puts its payload pointer
  for (size_t j = 0; j < incoming.size(); ++j) {
    const model::CollectiveFlow& flow = collective.schedule->flows[incoming[j]];
    comms.push_back(mailbox('c', flow.from, flow.to)->get_async<int>(&received[j]));
    sent_flow.push_back(SIZE_MAX);
  }
  for (size_t i = 0; i < comms.size(); ++i) {  // one send span per flow, ending when it arrived
    comms[i]->wait();
    if (sent_flow[i] == SIZE_MAX) continue;
    const model::CollectiveFlow& flow = collective.schedule->flows[sent_flow[i]];
    note({flow.from, ActivityKind::send, comms[i]->get_start_time(), comms[i]->get_finish_time(), flow.to, phase});
  }
}

void Replayer::run_collective(int rank, CollectiveRun& collective, int phase) {
  const double start = now();
  if (++collective.arrived == plan.gpus.size()) {  // the last to arrive lets the others go
    for (size_t other = 1; other < plan.gpus.size(); ++other) collective.all_here->release();
  } else {
    collective.all_here->acquire();
  }
  // The step latencies, then the flows (capped at the model's rate where NCCL's limits make it slower than the
  // links: collective_flows.hpp).
  sg4::this_actor::sleep_for(collective.schedule->chosen.latency_s);
  post_flows(rank, collective, phase);
  collective.done->wait();
  note({rank, ActivityKind::collective, start, now(), -1, phase});
}
}  // namespace treering::sim::detail
