// The Tree Attention paper's memory and volume formulas (arXiv 2408.04093, eqs. 8-14), in elements, for
// checking the plans against. t = N / p tokens per GPU, d = d_h x n_h, b the batch, p the GPUs. The paper
// counts multi-head attention (K/V heads = query heads) and no statistics for the ring.
#pragma once

namespace treering::model::paper {

// Per GPU: K and V of the shard, the same again as receive buffers, q and o.       Mem_ring = 4btd + 2bd
double ring_memory_elements(double b, double t, double d);
// Per GPU: K and V of the shard, q and o, lse and the max (or denominator).        Mem_tree = 2btd + 2bd + 2bn_h
double tree_memory_elements(double b, double t, double d, double n_h);
// Sent per GPU over the ring: p rotations of a K/V block.                          V_ring = 2btd * p
// (p - 1 rotations suffice: the p-th only returns each block to its owner; the plans send p - 1.)
double ring_volume_elements(double b, double t, double d, double p);
// Ring all-reduce of `elements` per GPU.                                            V_allreduce = 2(p-1)/p * numel
double allreduce_volume_elements(double elements, double p);
// The three all-reduces of tree decoding: numerator bd, max and denominator bn_h each.
//                                                                                   V_tree = 2(p-1)/p * (bd + 2bn_h)
double tree_volume_elements(double b, double d, double n_h, double p);

}  // namespace treering::model::paper
