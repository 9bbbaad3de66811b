// bf16 and fp16 conversions on values worked out by hand from the formats' definitions.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "treering/realrun/half.hpp"

using namespace treering::realrun;

TEST_CASE("bf16: the top 16 bits of a float, rounded to nearest even") {
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_bf16(-2.0f) == 0xC000);
  CHECK(float_to_bf16(1.0f + 1.0f / 256) == 0x3F80);  // half-way between 1 and 1 + 2^-7: to the even one
  CHECK(float_to_bf16(1.0f + 3.0f / 256) == 0x3F82);  // half-way between 1 + 2^-7 and 1 + 2^-6: to the even one
  CHECK(float_to_bf16(1.0f + 1.0f / 128) == 0x3F81);  // exact
  CHECK(bf16_to_float(0x3F81) == 1.0f + 1.0f / 128);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(bf16_to_float(float_to_bf16(std::numeric_limits<float>::infinity())) == std::numeric_limits<float>::infinity());
}

TEST_CASE("fp16: IEEE binary16, normals, subnormals, overflow, ties to even") {
  CHECK(float_to_fp16(1.0f) == 0x3C00);
  CHECK(float_to_fp16(-2.0f) == 0xC000);
  CHECK(float_to_fp16(65504.0f) == 0x7BFF);                      // the largest finite half
  CHECK(float_to_fp16(65520.0f) == 0x7C00);                      // half-way to 65536: rounds up, to infinity
  CHECK(float_to_fp16(std::ldexp(1.0f, -14)) == 0x0400);         // the smallest normal
  CHECK(float_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);         // the smallest subnormal
  CHECK(float_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);         // half of it: a tie, to even (zero)
  CHECK(float_to_fp16(std::ldexp(3.0f, -25)) == 0x0002);         // 1.5 units: a tie, to even (2)
  CHECK(float_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);  // half-way above 1: to even
  CHECK(float_to_fp16(1.0f + std::ldexp(3.0f, -11)) == 0x3C02);
  CHECK(fp16_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(fp16_to_float(0x3555) == doctest::Approx(1.0 / 3).scale(1e-12).epsilon(1e-3));
  CHECK(std::isnan(fp16_to_float(float_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("every finite fp16 and bf16 survives the round trip through float") {
  int checked = 0;
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    if ((h & 0x7C00) != 0x7C00) {
      CHECK(float_to_fp16(fp16_to_float(h)) == h);
      ++checked;
    }
    if ((h & 0x7F80) != 0x7F80) CHECK(float_to_bf16(bf16_to_float(h)) == h);
  }
  CHECK(checked == 63488);  // 65,536 less the 2 x 1,024 with the top exponent
  CHECK(parse_dtype("bf16") == Dtype::bf16);
  CHECK_THROWS_AS(parse_dtype("fp8"), std::invalid_argument);
}
