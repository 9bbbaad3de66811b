// The one place where quantities with units are parsed and formatted.
//
// Accepted forms (no space needed between number and unit; one space is allowed):
//   bandwidth: "900GB/s", "400Gb/s", "400Gbps", "25GiB/s"  (B = byte, b = bit; k M G T P = 1000^n,
//              Ki Mi Gi Ti Pi = 1024^n)                        -> bytes per second
//   bytes:     "80GB", "80GiB", "512KiB", "64B"                -> bytes
//   duration:  "1.5us", "1.5µs", "500ns", "2ms", "1s"          -> seconds
//   FLOP/s:    "989TFLOPS", "2.5PFLOP/s"                       -> floating-point operations per second
// Worked example: "400Gb/s" = 400e9 bit/s / 8 = 5e10 B/s; "80GiB" = 80 * 2^30 = 85899345920 B.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace treering::topologies {

// Each parser throws std::invalid_argument with a message saying what was expected; the caller adds
// the location. Values must be finite; they may be zero or negative here (range checks are the caller's).
double parse_bandwidth_Bps(std::string_view text);
double parse_bytes(std::string_view text);
double parse_duration_s(std::string_view text);
double parse_flops(std::string_view text);

// One rule for every count on the command line: SI prefixes (k M G T P) are powers of 1000, IEC prefixes (Ki Mi Gi
// Ti Pi) powers of 1024; the one exception is a bare K M G T P on a message size, a power of 1024 as nccl-tests
// reads its -b/-e sizes ("16G" = 2^34 B, where "16GB" = 1.6e10 B and "16GiB" = 2^34 B).
//
// Message sizes: a plain number of bytes, a bare K M G T P (powers of 1024: "8K" = 8192, "1G" = 2^30), or any form
// parse_bytes accepts ("8kB" = 8000, "8KiB" = 8192, "1PB" = 1e15). Must be >= 0.
double parse_message_size_bytes(std::string_view text);

// Token counts: a plain integer, k M G as powers of 1000 as papers write them ("80k" = 80000, "5.12M" =
// 5120000), or Ki Mi Gi as powers of 1024 ("128Ki" = 131072, what model cards call a 128k context); the result
// must be a whole number from 1 to 1e15.
long long parse_token_count(std::string_view text);

// The rule above in a line, for the options' --help.
inline constexpr const char* kTokenCountRule =
    "k M G = 1000^n (80k = 80000), Ki Mi Gi = 1024^n (128Ki = 131072); a range stops at the last value <= LAST "
    "(128k:4M:x2 ends at 2.048M, 128Ki:4Mi:x2 at 4Mi)";
inline constexpr const char* kMessageSizeRule =
    "bare K M G T P = 1024^n as nccl-tests reads them (16G = 2^34 B); with B, SI is 1000^n and IEC 1024^n "
    "(16GB = 1.6e10 B, 16GiB = 2^34 B)";

// Lists and ranges of either: "a,b,c", "FIRST:LAST" (doubling) or "FIRST:LAST:xF" (times F) or
// "FIRST:LAST:+S" (plus S), combinable with commas: "80k:5.12M:x2,10M". The range includes LAST when a step
// lands on it, and stops at the last value below it otherwise ("128k:4M:x2" ends at 2048000: 4096000 > 4M). Throws
// std::invalid_argument on a malformed item, an empty or descending range, or more than 100000 values. Message sizes
// must be whole numbers of bytes up to 1 PiB ("1.5" and "1e30" are refused).
std::vector<double> parse_message_sizes(std::string_view text);
std::vector<long long> parse_token_counts(std::string_view text);

// The SI formatter every other one goes through: 4 significant digits and the prefix k M G T P E that leaves at
// least 1 after rounding (999999 B is "1 MB", not "1000 kB"), none under 1000. A unit follows after a space, a
// bare number takes the prefix directly: format_si(450e9, "B/s") = "450 GB/s", format_si(80e3) = "80k",
// format_si(0.5) = "0.5". Zero and non-finite values have no prefix ("0 B", "inf B/s").
std::string format_si(double value, std::string_view unit = {});

// Human-readable forms with SI prefixes and 4 significant digits: "450 GB/s", "1.5 us", "80 GB",
// "989 TFLOP/s". Bandwidth is shown in bytes per second; format_bandwidth_bits gives "400 Gb/s". Durations go
// from ns up to s and no further ("2000 s"); under 1 ns they stay in ns ("0.5 ns").
std::string format_bandwidth(double bandwidth_Bps);
std::string format_bandwidth_bits(double bandwidth_Bps);
std::string format_bytes(double bytes);
std::string format_duration(double seconds);
std::string format_flops(double flops);
// Token counts as parse_token_counts reads them: 80000 -> "80k", 5120000 -> "5.12M", 1001 -> "1001".
std::string format_token_count(long long tokens);
// A list for a sentence: {"a.log", "b.json"} -> "a.log, b.json"; {} -> "".
std::string format_list(const std::vector<std::string>& items);

}  // namespace treering::topologies
