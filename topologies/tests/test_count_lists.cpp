// Message sizes and token counts on the command line.
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/topologies/units.hpp"

using namespace treering::topologies;

TEST_CASE("message sizes: nccl-tests' binary letters, or full units") {
  CHECK(parse_message_size_bytes("8") == 8);
  CHECK(parse_message_size_bytes("8K") == 8192);
  CHECK(parse_message_size_bytes("1G") == 1073741824.0);
  CHECK(parse_message_size_bytes("8kB") == 8000);   // SI kilo is a lower-case k
  CHECK_THROWS_AS(parse_message_size_bytes("8KB"), std::invalid_argument);
  CHECK(parse_message_size_bytes("8KiB") == 8192);
  CHECK_THROWS_AS(parse_message_size_bytes("8Q"), std::invalid_argument);
  CHECK_THROWS_AS(parse_message_size_bytes("-8"), std::invalid_argument);
}

TEST_CASE("token counts: the paper's decimal letters, whole numbers only") {
  CHECK(parse_token_count("80k") == 80000);
  CHECK(parse_token_count("5.12M") == 5120000);
  CHECK(parse_token_count("64000") == 64000);
  CHECK(parse_token_count("1G") == 1000000000);
  CHECK_THROWS_AS(parse_token_count("0"), std::invalid_argument);
  CHECK_THROWS_AS(parse_token_count("1.5"), std::invalid_argument);
  CHECK_THROWS_AS(parse_token_count("80K"), std::invalid_argument);  // capital K is a size letter, not tokens
  CHECK_THROWS_AS(parse_token_count("lots"), std::invalid_argument);
}

TEST_CASE("lists and ranges") {
  // 80k doubling: 80k 160k 320k 640k 1.28M 2.56M 5.12M (the paper's axis).
  CHECK(parse_token_counts("80k:5.12M:x2") ==
        std::vector<long long>{80000, 160000, 320000, 640000, 1280000, 2560000, 5120000});
  CHECK(parse_token_counts("1k,2k,10k:30k:+10k") == std::vector<long long>{1000, 2000, 10000, 20000, 30000});
  CHECK(parse_message_sizes("8:64") == std::vector<double>{8, 16, 32, 64});  // doubling by default
  CHECK(parse_message_sizes("1K:4K:x4") == std::vector<double>{1024, 4096});
  CHECK_THROWS_AS(parse_token_counts("5M:1M"), std::invalid_argument);
  CHECK_THROWS_AS(parse_token_counts("1k:5k:x1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_token_counts("1k:5k:/2"), std::invalid_argument);
  CHECK_THROWS_AS(parse_token_counts("1:1000000:+1"), std::invalid_argument);  // more than 100000 values
  CHECK_THROWS_AS(parse_token_counts(""), std::invalid_argument);
}

TEST_CASE("too large or fractional: said as such, never rounded or run") {
  CHECK_THROWS_WITH_AS(parse_token_count("1e30"), "'1e30' tokens is more than treering takes (1e15)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_message_sizes("1.5"), "'1.5' is not a whole number of bytes", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_message_sizes("8,1e30"), "a message of '1e30' is more than treering takes (1 PiB)", std::invalid_argument);
  CHECK(parse_message_sizes("1.5K") == std::vector<double>{1536});  // 1.5 x 1024: whole
  CHECK(parse_message_sizes("1024T") == std::vector<double>{1125899906842624.0});  // 2^50: the largest taken
}
