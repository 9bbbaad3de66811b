// A sweep row as bytes, for the sweep's worker processes to send their rows back (sweep_workers.hpp): the row as
// CBOR (nlohmann::json::to_cbor), every field under its name, doubles with their bits (infinities, NaN and -0
// included), so a row computed in a worker is the row the calling process would have computed.
#pragma once

#include <string>

#include "treering/analysis/decode_output.hpp"

namespace treering::analysis {

std::string encode_row(const DecodeRow& row);
// Throws std::runtime_error for bytes encode_row did not write (not CBOR, truncated, left over, or a field missing
// or of another type), saying so.
DecodeRow decode_row(const std::string& bytes);

}  // namespace treering::analysis
