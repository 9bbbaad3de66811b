// Transfers moving over shared links, as SimGrid's CM02 network model moves them on the platform of
// platform.hpp (no latency on links, no TCP window, no cross traffic, equal weights): every transfer under way
// gets the max-min fair share of its links' rates, recomputed when one starts or ends. The plan's own event
// loop (event_network.hpp) uses it in place of SimGrid's sharing solver. Private to sim.
//
// Changes are settled once per instant: transfers start and end during an instant, then settle() gives new
// rates to those on links whose load changed (transitively: a change on one link moves the shares of
// everything connected to it), as SimGrid solves once per step after handling all that ended at it.
#pragma once

#include <cstdint>
#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::sim::detail {

class SharedLinks {
 public:
  // When transfer `id` ends at its current rate; stale once `version` is not its version any more.
  struct Due {
    int id;
    std::uint64_t version;
    double end_s;
  };

  // `link_units_per_s`: per LinkId, its rate (simulated_units.hpp).
  explicit SharedLinks(std::vector<double> link_units_per_s);

  // A transfer of `units` starts at now_s over `links` (which must outlive it); its rate is set at the next
  // settle(), never above `cap_units_per_s` (0: no cap; a calibrated rate, or what the GPUs' threads can
  // drive: it bounds this transfer alone, as SimGrid's Comm::set_rate does, and leaves the rest of its links'
  // rate to the others). Returns its id (ids of ended transfers are used again after a settle).
  int start(const std::vector<topologies::LinkId>& links, double units, double now_s, double cap_units_per_s = 0);

  // Whether a Due for (id, version) still holds.
  bool current(int id, std::uint64_t version) const { return moving_[static_cast<size_t>(id)].version == version; }
  double start_s(int id) const { return moving_[static_cast<size_t>(id)].start_s; }

  // Transfer `id` has ended (its Due came): its links' other transfers get new rates at the next settle().
  void end(int id);

  // New rates for the transfers started since the last settle and those on links whose load changed, by
  // progressive filling: the link with the least rate per unfixed transfer fixes its transfers at that share,
  // until all are fixed; a transfer's cap is a link of its own. E.g. transfers A and B on a 10 GB/s link, B
  // also on a 4 GB/s one alone: B gets 4, A the 6 left; with A capped at 3 GB/s instead, A gets 3 and B 4.
  // Where every transfer is capped and every link carries the sum of its transfers' caps, each simply gets its cap.
  // Appends when each of them would end, at now_s.
  void settle(double now_s, std::vector<Due>& due);

 private:
  struct Moving {
    const std::vector<topologies::LinkId>* links = nullptr;
    double remaining_units = 0, units_per_s = 0, updated_s = 0, start_s = 0;
    double cap_units_per_s = 0;  // 0: none
    std::uint64_t version = 0;
    bool live = false;
  };
  struct Entry {  // progressive filling's heap: a link's share per unfixed transfer when pushed, or a cap
    double share_units_per_s;
    topologies::LinkId link;
    std::uint64_t version;
    int capped = -1;  // a transfer's cap (link and version unused), else -1
    bool operator>(const Entry& other) const { return share_units_per_s > other.share_units_per_s; }
  };
  void mark_changed(topologies::LinkId id);
  void drop_ended(topologies::LinkId id);
  void gather_affected();  // component_links_ and component_transfers_: what the marked links connect
  void fill_progressively(double now_s);
  bool caps_fit() const;
  void push_link(topologies::LinkId id);
  void fix(int transfer, double units_per_s, topologies::LinkId except);

  std::vector<Moving> moving_;
  std::vector<int> free_ids_;         // ended and off every link's list
  std::vector<int> started_, ended_;  // since the last settle
  std::vector<double> link_units_per_s_;
  std::vector<std::vector<int>> on_link_;  // per link: its transfers (ended ones until the next settle)
  std::vector<int> live_on_link_;
  std::vector<topologies::LinkId> marked_;  // links whose load changed since the last settle, shared by others
  std::vector<char> link_marked_;
  std::vector<topologies::LinkId> with_ended_;  // links whose list holds an ended transfer
  std::vector<char> link_with_ended_;
  std::vector<topologies::LinkId> component_links_;
  std::vector<int> component_transfers_;
  std::vector<double> previous_units_per_s_;  // of component_transfers_, before fill
  std::vector<Entry> heap_;
  std::vector<std::uint64_t> link_stamp_, transfer_stamp_;  // gather_affected's visits
  std::uint64_t stamp_ = 0;
  // progressive filling's state per link: rate left, transfers not yet fixed, version of its heap entry
  std::vector<double> left_units_per_s_;
  std::vector<int> unfixed_;
  std::vector<std::uint64_t> entry_version_;
};

}  // namespace treering::sim::detail
