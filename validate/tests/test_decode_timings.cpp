// Timed decodes from a hand-written CSV: fields as written, comments skipped, errors at the line.
#include <doctest/doctest.h>

#include <fstream>

#include "treering/topologies/input_error.hpp"
#include "treering/validate/decode_timings.hpp"

using namespace treering;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/" + name;
  std::ofstream(path) << text;
  return path;
}

const std::string kHeader = "cluster,workload,algo,gpus,seq_len,batch,tokens,prefill,measured_s\n";

}  // namespace

TEST_CASE("a timings CSV reads as written") {
  const std::string path = write("timings-good.csv", "# the paper's Llama runs, timed by hand\n" + kHeader +
                                                         "dgx-h100,llama3.1-8b,ring,8,20k,1,10,true,0.61\n"
                                                         "mi300x, llama3.1-8b , tree,4,80000,0,1,false,2.5e-2\n");
  REQUIRE(validate::is_decode_timings_csv(path));
  const auto rows = validate::read_decode_timings_csv(path);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].cluster == "dgx-h100");
  CHECK(rows[0].algorithm == "ring");
  CHECK(rows[0].gpus == 8);
  CHECK(rows[0].seq_len == 20000);
  CHECK(rows[0].tokens == 10);
  CHECK(rows[0].prefill);
  CHECK(rows[0].measured_s == 0.61);
  CHECK(rows[0].line == 3);
  CHECK(rows[1].workload == "llama3.1-8b");
  CHECK(rows[1].batch == 0);
  CHECK_FALSE(rows[1].prefill);
  CHECK(rows[1].measured_s == 0.025);
}

TEST_CASE("a malformed timings CSV is an error at its line") {
  CHECK_FALSE(validate::is_decode_timings_csv(std::string(TREERING_SOURCE_DIR) +
                                              "/validate/data/nccl-tests-allreduce-h100-2node-ndr.log"));
  auto fails = [](const std::string& name, const std::string& text, const std::string& message) {
    const std::string path = write(name, text);
    CHECK_THROWS_WITH_AS(validate::read_decode_timings_csv(path), doctest::Contains(message.c_str()),
                         topologies::InputError);
  };
  fails("timings-header.csv", "cluster,workload,algo,measured_s\n", "the header must be");
  fails("timings-empty.csv", kHeader, "no timings");
  fails("timings-fields.csv", kHeader + "dgx-h100,llama3.1-8b,ring,8,20k,1,10,true\n", ":2: error: expected 9 fields");
  fails("timings-gpus.csv", kHeader + "dgx-h100,llama3.1-8b,ring,0,20k,1,10,true,0.6\n",
        "gpus must be a whole number from 1 to 1000000");
  fails("timings-tokens.csv", kHeader + "dgx-h100,llama3.1-8b,ring,8,20k,1,0,true,0.6\n",
        "tokens must be a whole number from 1");
  fails("timings-huge.csv", kHeader + "dgx-h100,llama3.1-8b,ring,99999999999,20k,1,10,true,0.6\n",
        "gpus must be a whole number");
  fails("timings-prefill.csv", kHeader + "dgx-h100,llama3.1-8b,ring,8,20k,1,10,maybe,0.6\n",
        "prefill must be true or false");
  fails("timings-time.csv", kHeader + "dgx-h100,llama3.1-8b,ring,8,20k,1,10,true,-1\n",
        "measured_s must be a positive");
  fails("timings-length.csv", kHeader + "dgx-h100,llama3.1-8b,ring,8,lots,1,10,true,0.6\n", "seq_len");
}
