// How the rings cut a buffer (the model's byte counts and realrun's rings both use it).
#include <doctest/doctest.h>

#include "treering/model/ring_chunks.hpp"

namespace model = treering::model;

TEST_CASE("ring chunks: the first total mod parts one element longer, back to back") {
  // 16 in 3: 16 = 3 x 5 + 1, so chunk 0 has 6 and chunks 1, 2 have 5: (0, 6), (6, 5), (11, 5).
  CHECK(model::ring_chunk(16, 3, 0).first == 0);
  CHECK(model::ring_chunk(16, 3, 0).count == 6);
  CHECK(model::ring_chunk(16, 3, 1).first == 6);
  CHECK(model::ring_chunk(16, 3, 1).count == 5);
  CHECK(model::ring_chunk(16, 3, 2).first == 11);
  CHECK(model::ring_chunk(16, 3, 2).count == 5);
  // Fewer elements than parts: 2 in 4 -> 1, 1, 0, 0.
  CHECK(model::ring_chunk(2, 4, 1).count == 1);
  CHECK(model::ring_chunk(2, 4, 2).count == 0);
  CHECK(model::ring_chunk(2, 4, 3).first == 2);
  CHECK(model::ring_wrap(-1, 4) == 3);
  CHECK(model::ring_wrap(9, 4) == 1);
}
