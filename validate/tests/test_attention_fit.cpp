// The attention fit by kernel shape: points made from a known line come back as that line; bounds hold.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "treering/topologies/load.hpp"
#include "treering/validate/attention_fit.hpp"

using namespace treering;
using namespace treering::validate;

namespace {

// llama3.1-8b (one layer: 4,096 B of K and V a token; q 8,192, o 16,384 and lse 128 B a call) on an H100 (132 SMs):
// 15 chunks at 1,000 tokens, 31 at 2,000 (floor(2,000 / 64)), 33 from 2,112 tokens on.
double llama8b_bytes(long long tokens) { return static_cast<double>(tokens) * 4096 + 8192 + 16384 + 128; }
double llama8b_chunks(long long tokens) { return tokens >= 2112 ? 33 : static_cast<double>(tokens / 64); }

std::vector<AttentionMeasurement> from_line(double fixed_s, double split_s, double bandwidth_Bps) {
  std::vector<AttentionMeasurement> points;
  for (long long tokens : {1000LL, 2000LL, 16000LL, 128000LL}) {
    points.push_back({"llama3.1-8b", tokens,
                      fixed_s + split_s * llama8b_chunks(tokens) + llama8b_bytes(tokens) / bandwidth_Bps, "synthetic"});
  }
  return points;
}

}  // namespace

TEST_CASE("fit_attention_shapes: points on fixed + split x chunks + bytes / bandwidth give back the line") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const std::vector<AttentionShapeFit> fits = fit_attention_shapes(spec, from_line(11e-6, 0.3e-6, 2.6e12));
  REQUIRE(fits.size() == 1);
  const AttentionShapeFit& fit = fits[0];
  CHECK(fit.line.head_dim == 128);
  CHECK(fit.line.group == 4);
  CHECK(fit.line.fixed_s == doctest::Approx(11e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.line.split_per_chunk_s == doctest::Approx(0.3e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.line.bandwidth_Bps == doctest::Approx(2.6e12).scale(1e12).epsilon(1e-6));
  CHECK(fit.points == 4);
  CHECK(fit.tokens == std::pair<long long, long long>{1000, 128000});
  CHECK(fit.chunks == std::pair<int, int>{15, 33});
  CHECK(fit.max_abs_rel_error < 1e-9);
  // One measured point per shape more than the parameters: errors estimated, ~0 on an exact line.
  CHECK(fit.fixed_error_s >= 0);
  CHECK(fit.fixed_error_s < 1e-12);
}

TEST_CASE("fit_attention_shapes: a split that would come out negative is held at 0 and the rest refitted") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  // Times falling with the chunks (1 us less per chunk) cannot have split >= 0: the best bounded fit holds it at 0.
  const std::vector<AttentionShapeFit> fits = fit_attention_shapes(spec, from_line(40e-6, -1e-6, 2.6e12));
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].line.split_per_chunk_s == 0.0);
  CHECK(fits[0].line.fixed_s > 0);
  CHECK(fits[0].split_error_s < 0);  // held, not estimated
}

TEST_CASE("fit_attention_shapes refuses a GPU without multiprocessors and a shape measured at one size") {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  std::vector<AttentionMeasurement> one_size{{"llama3.1-8b", 4000, 30e-6, "a"}, {"llama3.1-8b", 4000, 31e-6, "b"}};
  CHECK_THROWS_WITH_AS(fit_attention_shapes(spec, one_size), doctest::Contains("at least 2 different token counts"),
                       std::invalid_argument);
  for (auto& [name, gpu] : spec.gpu_models) gpu.multiprocessors = 0;
  CHECK_THROWS_WITH_AS(fit_attention_shapes(spec, from_line(11e-6, 0.3e-6, 2.6e12)),
                       doctest::Contains("multiprocessors"), std::invalid_argument);
}
