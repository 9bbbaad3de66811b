// The canvas as a PNG file: zlib for the compression and the CRCs.
#include <zlib.h>

#include <stdexcept>

#include "line_chart.hpp"

namespace treering::cli::detail {
namespace {

void append_be32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

// A PNG chunk: the data's length, the type, the data, and the CRC-32 of type and data.
void append_chunk(std::string& png, const std::string& type, const std::string& data) {
  append_be32(png, static_cast<std::uint32_t>(data.size()));
  const std::string body = type + data;
  png += body;
  append_be32(png, static_cast<std::uint32_t>(
                       crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

// 8-bit RGB, no interlace; every scanline with filter type 0 (none), all in one zlib-compressed IDAT chunk.
}  // namespace

std::string encode_png(const Canvas& canvas) {
  const size_t row_bytes = static_cast<size_t>(canvas.width_px) * 3;
  std::string scanlines;
  scanlines.reserve((row_bytes + 1) * static_cast<size_t>(canvas.height_px));
  for (int y = 0; y < canvas.height_px; ++y) {
    scanlines.push_back('\0');
    scanlines.append(reinterpret_cast<const char*>(&canvas.rgb_bytes[static_cast<size_t>(y) * row_bytes]), row_bytes);
  }
  uLongf compressed_size = compressBound(scanlines.size());
  std::string compressed(compressed_size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(compressed.data()), &compressed_size,
                reinterpret_cast<const Bytef*>(scanlines.data()), scanlines.size(), Z_BEST_COMPRESSION) != Z_OK) {
    throw std::runtime_error("line chart: zlib could not compress the image");
  }
  compressed.resize(compressed_size);
  std::string header;
  append_be32(header, static_cast<std::uint32_t>(canvas.width_px));
  append_be32(header, static_cast<std::uint32_t>(canvas.height_px));
  header.append("\x08\x02\x00\x00\x00", 5);  // bit depth 8, colour type 2 (RGB), deflate, filtering 0, no interlace
  std::string png("\x89PNG\r\n\x1a\n", 8);
  append_chunk(png, "IHDR", header);
  append_chunk(png, "IDAT", compressed);
  append_chunk(png, "IEND", "");
  return png;
}

}  // namespace treering::cli::detail
