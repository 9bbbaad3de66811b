// Units: expected values worked out by hand in the comments.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "treering/topologies/units.hpp"

using namespace treering::topologies;

TEST_CASE("bandwidth distinguishes bits from bytes and decimal from binary prefixes") {
  CHECK(parse_bandwidth_Bps("900GB/s") == doctest::Approx(900e9).scale(1e-12));  // 900 * 10^9 B/s
  CHECK(parse_bandwidth_Bps("400Gb/s") == doctest::Approx(50e9).scale(1e-12));   // 400e9 bit/s / 8
  CHECK(parse_bandwidth_Bps("400Gbps") == doctest::Approx(50e9).scale(1e-12));
  CHECK(parse_bandwidth_Bps("25GBps") == doctest::Approx(25e9).scale(1e-12));
  CHECK(parse_bandwidth_Bps("1GiB/s") == doctest::Approx(1073741824.0).scale(1e-12));  // 2^30
  CHECK(parse_bandwidth_Bps("100 Mb/s") == doctest::Approx(12.5e6).scale(1e-12));      // one space allowed
  CHECK(parse_bandwidth_Bps("3.35TB/s") == doctest::Approx(3.35e12).scale(1e-12));
  CHECK(parse_bandwidth_Bps("8b/s") == doctest::Approx(1.0).scale(1e-12));
}

TEST_CASE("sizes, durations and compute rates") {
  CHECK(parse_bytes("80GB") == doctest::Approx(80e9).scale(1e-12));
  CHECK(parse_bytes("80GiB") == doctest::Approx(85899345920.0).scale(1e-12));  // 80 * 2^30
  CHECK(parse_bytes("512KiB") == doctest::Approx(524288.0).scale(1e-12));      // 512 * 1024
  CHECK(parse_bytes("64B") == doctest::Approx(64.0).scale(1e-12));
  CHECK(parse_duration_s("1.5us") == doctest::Approx(1.5e-6).scale(1e-12));
  CHECK(parse_duration_s("1.5µs") == doctest::Approx(1.5e-6).scale(1e-12));
  CHECK(parse_duration_s("130ns") == doctest::Approx(130e-9).scale(1e-12));
  CHECK(parse_duration_s("2ms") == doctest::Approx(2e-3).scale(1e-12));
  CHECK(parse_duration_s("1s") == doctest::Approx(1.0).scale(1e-12));
  CHECK(parse_duration_s("0us") == 0.0);
  CHECK(parse_flops("989TFLOPS") == doctest::Approx(989e12).scale(1e-12));
  CHECK(parse_flops("2.5PFLOP/s") == doctest::Approx(2.5e15).scale(1e-12));
}

TEST_CASE("a quantity without its unit, or with a unit of the wrong kind, is refused with a reason") {
  CHECK_THROWS_WITH_AS(parse_bandwidth_Bps("400"), "'400' has no unit (expected e.g. 400Gb/s or 900GB/s)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_bandwidth_Bps("400G"),
                       "unknown bandwidth unit 'G' in '400G' (expected B/s or b/s with an optional prefix k M G T P "
                       "Ki Mi Gi Ti, e.g. 400Gb/s)",
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_bandwidth_Bps("400GB"), std::invalid_argument);    // a size, not a rate
  CHECK_THROWS_AS(parse_bandwidth_Bps("400gb/s"), std::invalid_argument);  // prefixes are case-sensitive
  CHECK_THROWS_AS(parse_bytes("80GB/s"), std::invalid_argument);
  CHECK_THROWS_AS(parse_duration_s("1.5"), std::invalid_argument);
  CHECK_THROWS_AS(parse_duration_s("1.5uss"), std::invalid_argument);
  CHECK_THROWS_AS(parse_duration_s("fast"), std::invalid_argument);
  CHECK_THROWS_AS(parse_flops("989T"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes(""), std::invalid_argument);
}

TEST_CASE("negative and zero values parse; range checks belong to the caller") {
  CHECK(parse_bandwidth_Bps("-1GB/s") == doctest::Approx(-1e9).scale(1e-12));
  CHECK(parse_bandwidth_Bps("0GB/s") == 0.0);
}

TEST_CASE("formatting picks a prefix and keeps four significant digits") {
  CHECK(format_bandwidth(450e9) == "450 GB/s");
  CHECK(format_bandwidth_bits(50e9) == "400 Gb/s");
  CHECK(format_bandwidth(1.5625e9) == "1.562 GB/s");
  CHECK(format_bytes(80e9) == "80 GB");
  CHECK(format_token_count(80000) == "80k");
  CHECK(format_token_count(5120000) == "5.12M");
  CHECK(format_token_count(1001) == "1001");  // 1.001k would need three decimals
  CHECK(format_token_count(1010) == "1.01k");
  CHECK(format_token_count(1500) == "1.5k");
  CHECK(format_token_count(10240000) == "10.24M");
  CHECK(format_token_count(999) == "999");
  CHECK(format_duration(1.5e-6) == "1.5 us");
  CHECK(format_duration(130e-9) == "130 ns");
  CHECK(format_duration(2.5e-3) == "2.5 ms");
  CHECK(format_duration(0.0) == "0 s");
  CHECK(format_flops(989e12) == "989 TFLOP/s");
}

TEST_CASE("format_si: the one SI formatter, a prefix chosen after rounding to 4 significant digits") {
  CHECK(format_si(80e3) == "80k");  // a bare number takes the prefix directly
  CHECK(format_si(5.12e6) == "5.12M");
  CHECK(format_si(1e9) == "1G");
  CHECK(format_si(-2000) == "-2k");
  CHECK(format_si(999) == "999");
  CHECK(format_si(0.5) == "0.5");
  CHECK(format_si(0) == "0");
  CHECK(format_si(450e9, "B/s") == "450 GB/s");  // a unit follows after a space
  CHECK(format_si(12, "B") == "12 B");
  CHECK(format_si(HUGE_VAL, "B/s") == "inf B/s");
  // 999999 / 1e3 = 999.999, which 4 digits round to 1000: the next prefix up reads 999999 / 1e6 -> "1".
  CHECK(format_si(999999) == "1M");
  CHECK(format_bytes(999999) == "1 MB");      // was "1000 kB"
  CHECK(format_bytes(999499) == "999.5 kB");  // 999.499 rounds to 999.5: stays in k
  // The same rounding for durations: 0.9999999 s is 999.9999 ms, which rounds to 1000 ms -> "1 s".
  CHECK(format_duration(0.9999999) == "1 s");      // was "1000 ms"
  CHECK(format_duration(999.99999e-9) == "1 us");  // was "1000 ns"
  CHECK(format_duration(2000) == "2000 s");        // seconds at most
  CHECK(format_duration(5e-10) == "0.5 ns");       // under 1 ns: still ns
  CHECK(format_duration(-2.5e-3) == "-2.5 ms");
}

TEST_CASE("format_list: items joined by a comma and a space") {
  CHECK(format_list({"a.log", "b.json"}) == "a.log, b.json");
  CHECK(format_list({"one"}) == "one");
  CHECK(format_list({}).empty());
}
