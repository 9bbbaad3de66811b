// The 16-bit formats K, V and q travel in: bfloat16 (8 exponent bits, 7 mantissa bits) and IEEE binary16
// (5 exponent bits, 10 mantissa bits), stored as uint16_t, converted to and from float by round to nearest,
// ties to even. Host code; the device kernels use CUDA's own types.
// Examples: 1.0f -> bf16 0x3F80, fp16 0x3C00; 65504 is the largest finite fp16; 1 + 2^-8 rounds to 1 in bf16
// (a tie, to the even mantissa) and stays exact in fp16.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include "treering/topologies/input_error.hpp"

namespace treering::realrun {

enum class Dtype { bf16, fp16 };

inline Dtype parse_dtype(const std::string& name) {
  if (name == "bf16" || name == "bfloat16") return Dtype::bf16;
  if (name == "fp16" || name == "float16" || name == "half") return Dtype::fp16;
  throw topologies::InputError("unknown 16-bit dtype '" + name + "' (bf16 or fp16)");
}

inline std::uint32_t bits_of(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float float_of(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = bits_of(value);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0)
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);     // NaN stays NaN
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);  // to nearest, ties to even
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

inline float bf16_to_float(std::uint16_t value) { return float_of(static_cast<std::uint32_t>(value) << 16); }

std::uint16_t float_to_fp16(float value);
float fp16_to_float(std::uint16_t value);

inline std::uint16_t to_half(Dtype dtype, float value) {
  return dtype == Dtype::bf16 ? float_to_bf16(value) : float_to_fp16(value);
}
inline float from_half(Dtype dtype, std::uint16_t value) {
  return dtype == Dtype::bf16 ? bf16_to_float(value) : fp16_to_float(value);
}

}  // namespace treering::realrun
