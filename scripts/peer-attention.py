#!/usr/bin/env python3
"""The peer of `treering-realrun bench attention`: PyTorch's scaled-dot-product attention timed at the same shapes,
lengths and dtype, the same way, and a table of ours against the best backend.

How it times (as the project's bench does): decode attention, one query token per sequence; random inputs, never
zeros; as many copies of K and V as make a call's reads exceed twice the L2, rotated call by call, so that K/V come
from HBM; a batch of calls captured in one CUDA graph and replayed between one pair of CUDA events; the median of
the per-call times over --iters replays. Grouped-query attention is asked as serving engines ask it of SDPA: the
query-head group folded into the query length (q [b, n_kv, g, d] against K/V [b, n_kv, T, d]), so each backend reads
K/V once per KV head. Backends: cuDNN, FlashAttention-2, memory-efficient; one that refuses a shape is recorded so.

Usage: python3 scripts/peer-attention.py OURS.json [MORE.json ...] -o peer.json [--iters 20]
OURS.json: files `treering-realrun bench attention --backend cuda` wrote (their rows name the shapes). Exits 2 when
PyTorch with CUDA is not there.
"""
import argparse
import json
import math
import statistics
import sys
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ours", nargs="+", help="bench attention JSON files of treering-realrun (cuda backend)")
    parser.add_argument("-o", "--output", required=True, help="the peer's timings and the comparison (JSON)")
    parser.add_argument("--iters", type=int, default=20, help="graph replays per size (default 20)")
    return parser.parse_args()


def load_cases(paths):
    """(workload, shape, tokens, our median seconds) for every row of our files, in order."""
    cases = []
    for path in paths:
        with open(path) as file:
            document = json.load(file)
        if document.get("bench") != "attention":
            sys.exit(f"peer-attention: {path} is not a bench attention file")
        for row in document["results"]["attention"]:
            missing = [key for key in ("batch", "query_heads", "kv_heads", "head_dim", "dtype") if key not in row]
            if missing:
                sys.exit(f"peer-attention: {path}: rows lack {', '.join(missing)} (written by an older treering-realrun)")
            shape = (row["batch"], row["query_heads"], row["kv_heads"], row["head_dim"], row["dtype"])
            cases.append((row["workload"], shape, int(row["tokens"]), row["time_s"]["median"]))
    return cases


def time_backend(torch, backend, shape, tokens, iters):
    """Seconds per call (median, p10, p90) of SDPA with one backend, or the error it raised."""
    from torch.nn.attention import sdpa_kernel
    batch, query_heads, kv_heads, head_dim, dtype_name = shape
    dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float16
    group = query_heads // kv_heads
    device = torch.device("cuda")
    kv_bytes = 2 * batch * kv_heads * tokens * head_dim * 2
    l2_bytes = torch.cuda.get_device_properties(device).L2_cache_size
    copies = max(1, math.ceil(2 * l2_bytes / max(kv_bytes, 1)))
    generator = torch.Generator(device=device).manual_seed(tokens)
    q = torch.randn(batch, kv_heads, group, head_dim, device=device, dtype=dtype, generator=generator)
    ks = [torch.randn(batch, kv_heads, tokens, head_dim, device=device, dtype=dtype, generator=generator) for _ in range(copies)]
    vs = [torch.randn(batch, kv_heads, tokens, head_dim, device=device, dtype=dtype, generator=generator) for _ in range(copies)]
    attention = torch.nn.functional.scaled_dot_product_attention

    def call(i):  # the output is allocated from the graph's pool; no copy of it is timed
        return attention(q, ks[i % copies], vs[i % copies])

    stream = torch.cuda.Stream()
    try:
        with sdpa_kernel([backend]), torch.cuda.stream(stream):
            for i in range(3):  # warm-up: the backend's plans and workspaces
                call(i)
            stream.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            call(0)
            stop.record(stream)
            stop.synchronize()
            estimate_s = max(start.elapsed_time(stop) * 1e-3, 1e-6)
            calls = max(copies, min(10000, math.ceil(1e-3 / estimate_s)))
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                for i in range(calls):
                    call(i)
            graph.replay()
            samples = []
            for _ in range(iters):
                start.record(stream)
                graph.replay()
                stop.record(stream)
                stop.synchronize()
                samples.append(start.elapsed_time(stop) * 1e-3 / calls)
    except Exception as error:  # a backend that does not take this shape
        return {"error": str(error).splitlines()[0][:200]}
    samples.sort()
    return {"median": statistics.median(samples), "p10": samples[len(samples) // 10], "p90": samples[(9 * len(samples)) // 10],
            "calls_per_sample": calls, "copies": copies}


def main():
    args = parse_args()
    try:
        import torch
        from torch.nn.attention import SDPBackend
    except ImportError:
        print("peer-attention: PyTorch is not installed here; nothing to compare", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("peer-attention: PyTorch sees no CUDA device; nothing to compare", file=sys.stderr)
        return 2
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    rows, comparison = [], []
    print(f"{'workload':14} {'tokens':>8} {'ours':>10} {'best peer':>10} {'backend':>9} {'ours/peer':>9}")
    for workload, shape, tokens, ours_s in load_cases(args.ours):
        best = None
        for name, backend in backends.items():
            timing = time_backend(torch, backend, shape, tokens, args.iters)
            rows.append({"workload": workload, "tokens": tokens, "batch": shape[0], "query_heads": shape[1], "kv_heads": shape[2],
                         "head_dim": shape[3], "dtype": shape[4], "backend": name, "time_s": timing})
            if "median" in timing and (best is None or timing["median"] < best[1]):
                best = (name, timing["median"])
        if best is None:
            continue
        ratio = ours_s / best[1]
        comparison.append({"workload": workload, "tokens": tokens, "ours_s": ours_s, "peer_s": best[1], "peer_backend": best[0],
                           "ours_over_peer": ratio})
        print(f"{workload:14} {tokens:8d} {ours_s * 1e6:8.1f}us {best[1] * 1e6:8.1f}us {best[0]:>9} {ratio:8.2f}x")
    provenance = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "argv": sys.argv, "torch": torch.__version__,
                  "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(0),
                  "method": "SDPA, group folded into the query length, CUDA graph of back-to-back calls, K/V rotated past 2x L2"}
    with open(args.output, "w") as file:
        json.dump({"provenance": provenance, "bench": "peer-attention", "results": {"attention": rows}, "comparison": comparison},
                  file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
