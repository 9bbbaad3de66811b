// IEEE binary16 <-> float, round to nearest even (half.hpp).
#include "treering/realrun/half.hpp"

namespace treering::realrun {

std::uint16_t float_to_fp16(float value) {
  const std::uint32_t bits = bits_of(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) {  // inf or NaN
    return static_cast<std::uint16_t>(sign | 0x7C00u | (magnitude > 0x7F800000u ? 0x200u : 0u));
  }
  if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds past 65504: inf
  if (magnitude < 0x38800000u) {               // below 2^-14: a subnormal half (or zero)
    if (magnitude < 0x33000000u) return sign;  // below half the smallest subnormal (2^-25): zero
    const std::uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    const int shift = 126 - static_cast<int>(magnitude >> 23);  // 14 + 24 - exponent - 1 ... aligned to 2^-24 units
    const std::uint32_t kept = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t half_way = 1u << (shift - 1);
    const std::uint32_t rounded = kept + ((rest > half_way || (rest == half_way && (kept & 1u))) ? 1u : 0u);
    return static_cast<std::uint16_t>(sign | rounded);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  const std::uint32_t rebased = magnitude - (112u << 23);
  const std::uint32_t rounded = rebased + 0xFFFu + ((rebased >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

float fp16_to_float(std::uint16_t value) {
  const std::uint32_t sign = static_cast<std::uint32_t>(value & 0x8000u) << 16;
  const std::uint32_t exponent = (value >> 10) & 0x1Fu;
  std::uint32_t mantissa = value & 0x3FFu;
  if (exponent == 0x1Fu) return float_of(sign | 0x7F800000u | (mantissa << 13));  // inf or NaN
  if (exponent != 0) return float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return float_of(sign);  // +-0
  int shift = 0;                             // subnormal: normalise
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  return float_of(sign | ((113u - static_cast<std::uint32_t>(shift)) << 23) | ((mantissa & 0x3FFu) << 13));
}

}  // namespace treering::realrun
