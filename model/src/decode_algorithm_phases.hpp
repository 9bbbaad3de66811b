// The phase builders of the combines that build their transfers rank by rank (tree-lse, pass-q, a2a); the table's
// other builders sit beside it in decode_algorithms.cpp. Private to model.
#pragma once

#include <vector>

#include "treering/model/decode_algorithms.hpp"

namespace treering::model::detail {

// Every rank's flash-decoding over its own shard: where most combines start.
Phase attention_phase();

// tree-lse: reduce (o, lse) inside each domain, then across the domains' first ranks; broadcast o back down the
// same edges reversed.
std::vector<Phase> tree_lse_phases(const PhaseInputs& in);
// pass-q: the query blocks travel the ring; then every rank sends each owner the partial states of the owner's
// sequences (one all-to-all) and the owner merges the p states of each.
std::vector<Phase> pass_q_phases(const PhaseInputs& in);
// a2a: after the attention, every rank sends each other rank the partial states of that rank's head slice; each
// merges the p states of its slice.
std::vector<Phase> a2a_phases(const PhaseInputs& in);

}  // namespace treering::model::detail
