// The event loop's max-min fair sharing (sim/src/shared_links.hpp), on hand-made links: shares, caps, ends.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "../src/shared_links.hpp"

using treering::sim::detail::SharedLinks;
using treering::topologies::LinkId;

namespace {

// Rates in units per second after one settle at t = 0: the end time of each transfer of `units` is units / rate.
std::map<int, double> settle_rates(SharedLinks& links, const std::map<int, double>& units) {
  std::vector<SharedLinks::Due> due;
  links.settle(0.0, due);
  std::map<int, double> rates;
  for (const SharedLinks::Due& d : due) rates[d.id] = units.at(d.id) / d.end_s;
  return rates;
}

}  // namespace

TEST_CASE("progressive filling: the header's example, 10 and 4 units/s") {
  // A on link 0 (10/s); B on links 0 and 1 (4/s). Link 1 is the tightest per transfer: B gets 4, A the 6 left.
  SharedLinks links({10.0, 4.0});
  const std::vector<LinkId> a_links{0}, b_links{0, 1};
  const int a = links.start(a_links, 60.0, 0.0);
  const int b = links.start(b_links, 40.0, 0.0);
  auto rates = settle_rates(links, {{a, 60.0}, {b, 40.0}});
  CHECK(rates[a] == doctest::Approx(6.0).scale(1e-12));
  CHECK(rates[b] == doctest::Approx(4.0).scale(1e-12));
}

TEST_CASE("a cap is a link of the transfer's own: the others keep what it cannot use") {
  // A capped at 3/s: it takes 3 of link 0, B still 4 (link 1), and 3 of link 0's 10 go unused.
  SharedLinks links({10.0, 4.0});
  const std::vector<LinkId> a_links{0}, b_links{0, 1};
  const int a = links.start(a_links, 30.0, 0.0, 3.0);
  const int b = links.start(b_links, 40.0, 0.0);
  auto rates = settle_rates(links, {{a, 30.0}, {b, 40.0}});
  CHECK(rates[a] == doctest::Approx(3.0).scale(1e-12));
  CHECK(rates[b] == doctest::Approx(4.0).scale(1e-12));
}

TEST_CASE("caps against fair shares: below the share it binds, above it does nothing") {
  // Three transfers on one 9/s link: fair share 3 each. C capped at 1: C 1, the other two (9 - 1) / 2 = 4.
  SharedLinks links({9.0});
  const std::vector<LinkId> one{0};
  const int a = links.start(one, 8.0, 0.0);
  const int b = links.start(one, 8.0, 0.0, 5.0);  // above the 4 it would get: no effect
  const int c = links.start(one, 2.0, 0.0, 1.0);
  auto rates = settle_rates(links, {{a, 8.0}, {b, 8.0}, {c, 2.0}});
  CHECK(rates[a] == doctest::Approx(4.0).scale(1e-12));
  CHECK(rates[b] == doctest::Approx(4.0).scale(1e-12));
  CHECK(rates[c] == doctest::Approx(1.0).scale(1e-12));
}

TEST_CASE("a capped transfer alone on its links moves at its cap, one without links at its cap too") {
  SharedLinks links({10.0});
  const std::vector<LinkId> one{0}, none{};
  const int a = links.start(one, 10.0, 0.0, 2.5);
  const int b = links.start(none, 10.0, 0.0, 5.0);
  auto rates = settle_rates(links, {{a, 10.0}, {b, 10.0}});
  CHECK(rates[a] == doctest::Approx(2.5).scale(1e-12));
  CHECK(rates[b] == doctest::Approx(5.0).scale(1e-12));
}

TEST_CASE("when a transfer ends, the one left takes the link up to its cap") {
  // A (10 units, no cap) and B (100 units, cap 8) on a 10/s link: A 5, B 5 until A ends at 2 s; then B alone
  // at min(10, 8) = 8/s: its last 90 units take 11.25 s, ending at 13.25 s.
  SharedLinks links({10.0});
  const std::vector<LinkId> one{0};
  const int a = links.start(one, 10.0, 0.0);
  const int b = links.start(one, 100.0, 0.0, 8.0);
  std::vector<SharedLinks::Due> due;
  links.settle(0.0, due);
  REQUIRE(due.size() == 2);
  const SharedLinks::Due first = due[0].id == a ? due[0] : due[1];
  CHECK(first.end_s == doctest::Approx(2.0).scale(1e-12));
  links.end(a);
  due.clear();
  links.settle(2.0, due);
  REQUIRE(due.size() == 1);
  CHECK(due[0].id == b);
  CHECK(due[0].end_s == doctest::Approx(13.25).scale(1e-12));
}
