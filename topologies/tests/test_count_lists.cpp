// Message sizes and token counts on the command line.
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/topologies/units.hpp"

using namespace treering::topologies;

TEST_CASE("message sizes: nccl-tests' binary letters, or full units") {
  CHECK(parse_message_size_bytes("8") == 8);
  CHECK(parse_message_size_bytes("8K") == 8192);
  CHECK(parse_message_size_bytes("1G") == 1073741824.0);
  CHECK(parse_message_size_bytes("8kB") == 8000);  // SI kilo is a lower-case k
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
  CHECK_THROWS_WITH_AS(parse_token_count("1e30"), "'1e30' tokens is more than treering takes (1e15)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_message_sizes("1.5"), "'1.5' is not a whole number of bytes", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_message_sizes("8,1e30"), "a message of '1e30' is more than treering takes (1 PiB)",
                       std::invalid_argument);
  CHECK(parse_message_sizes("1.5K") == std::vector<double>{1536});                 // 1.5 x 1024: whole
  CHECK(parse_message_sizes("1024T") == std::vector<double>{1125899906842624.0});  // 2^50: the largest taken
}

TEST_CASE("one rule for prefixes: SI decimal, IEC binary, a bare letter on a message size binary as nccl-tests") {
  // Tokens: 128k = 128 x 1000, 128Ki = 128 x 1024 (a model card's "128k context", 2^17 tokens).
  CHECK(parse_token_count("128k") == 128000);
  CHECK(parse_token_count("128Ki") == 131072);
  CHECK(parse_token_count("4Mi") == 4194304);
  CHECK(parse_token_count("1Gi") == 1073741824);
  // A doubling range from 128Ki reaches 4Mi exactly: 2^17 .. 2^22, six values.
  CHECK(parse_token_counts("128Ki:4Mi:x2") ==
        std::vector<long long>{131072, 262144, 524288, 1048576, 2097152, 4194304});
  // From 128k (decimal) it stops below 4M: 128000 x 2^5 = 4096000 > 4000000, so the last is 2048000.
  CHECK(parse_token_counts("128k:4M:x2").back() == 2048000);
  CHECK_THROWS_AS(parse_token_count("128K"), std::invalid_argument);  // K is no SI prefix (k is)
  CHECK(parse_token_count("1.5Ki") == 1536);
  CHECK_THROWS_AS(parse_token_count("1.0001Ki"), std::invalid_argument);  // 1024.1024 tokens: not whole
  // Message sizes: bare letters are nccl-tests' powers of 1024; with B, SI and IEC as everywhere.
  CHECK(parse_message_size_bytes("16G") == 17179869184.0);  // 16 x 2^30 = 2^34
  CHECK(parse_message_size_bytes("16GB") == 16e9);
  CHECK(parse_message_size_bytes("16GiB") == 17179869184.0);
  CHECK(parse_message_size_bytes("1PB") == 1e15);
  CHECK(parse_message_size_bytes("1P") == 1125899906842624.0);  // 2^50
  CHECK(parse_message_size_bytes("1PiB") == 1125899906842624.0);
}
