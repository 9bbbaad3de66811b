// A sweep row as bytes, for the sweep's worker processes to send their rows back (sweep_workers.hpp): every
// field, doubles as their 8 bytes (bit-identical, infinities and -0 included), so a row computed in a worker is
// the row the calling process would have computed. Both ends are the same binary on the same machine.
#pragma once

#include <string>

#include "decode_output.hpp"

namespace treering::cli {

std::string encode_row(const DecodeRow& row);
// Throws std::runtime_error for bytes encode_row did not write (truncated, or left over).
DecodeRow decode_row(const std::string& bytes);

}  // namespace treering::cli
