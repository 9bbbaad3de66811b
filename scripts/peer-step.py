#!/usr/bin/env python3
"""The PyTorch peer of `treering-realrun step`: one decode step of a Llama-architecture model on one NVIDIA GPU,
captured in one CUDA graph and timed, so that the project's own CUDA step can be set against it.

What it measures: for each workload x batch x seq_len point, the wall time of one graph replay of a whole decode
step (every layer's RMSNorm, fused QKV projection, RoPE at position S, K/V written into the cache at index S,
scaled-dot-product attention over the S cached tokens plus the new one, output projection, RMSNorm, fused gate/up,
SiLU-and-multiply, down projection; then the final norm, the LM head and argmax), bf16 weights and cache, batch B
new tokens, tensor parallelism 1. Weights and KV cache are random (never zeros). Each replay is timed between one
pair of CUDA events; the median of --iters replays is reported, with every sample. The graph starts from a static
hidden-state buffer (an embedding lookup done once outside the graph), so every replay computes the same thing.

Attention: SDPA with enable_gqa=True, unless that raises (an older torch) or torch would run it on its math
backend, which repeats the K/V heads and so reads more bytes; then the query group is folded into the query length
(q [B, nkv, g, d] against the cache [B, nkv, S+1, d]), the same attention. Each entry names the form and, when
torch's chooser tells, the SDPA backend. Not modelled: Llama 3.1's rope_scaling (values only, not work).

Usage:
  python3 scripts/peer-step.py --workload llama3.1-8b,llama3.2-1b --seq-len 4k,32k,128k --batch 1,8,32 \
      [--iters 20] [--warmup 3] [--config FILE.json] -o OUT.json
--seq-len takes a comma list; a k suffix means x1024 (4k = 4096, 128k = 131072). --config reads a Hugging Face
config.json as one more workload, named after the file's stem (with or without --workload). Every point stands
alone: one that does not fit in memory is recorded as skipped, one that raises is recorded with its error, and the
run goes on. Needs PyTorch with CUDA (exits 2 without it); bad arguments exit 2.
"""
import argparse
import dataclasses
import datetime
import gc
import importlib
import json
import os
import socket
import statistics
import sys

torch = None  # imported by import_torch(), so that argument errors are reported without PyTorch
step_torch = None  # peer_step_torch.py, imported with it

GIB = 1 << 30
SLACK_BYTES = GIB  # activations, attention workspaces, the graph's pool, allocator rounding
BF16_BYTES = 2


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    rope_theta: float
    tied: bool


# Shapes from Meta's Hugging Face config.json of each model (meta-llama/Llama-3.2-1B and meta-llama/Llama-3.1-8B).
# rope_scaling (type "llama3") is not applied: it changes the rotation angles' values, not the work of the step.
BUILT_IN = {
    "llama3.2-1b": ModelSpec("llama3.2-1b", hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64,
                             intermediate=8192, vocab=128256, rope_theta=500000.0, tied=True),
    "llama3.1-8b": ModelSpec("llama3.1-8b", hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128,
                             intermediate=14336, vocab=128256, rope_theta=500000.0, tied=False),
}


class ArgumentError(Exception):
    """A bad argument or configuration file: reported as `error: ...`, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"error: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def parse_int_list(text, allow_k):
    """Positive integers from a comma list; with allow_k, a k/K suffix multiplies by 1024."""
    values = []
    for item in text.split(","):
        item = item.strip()
        scale = 1
        if allow_k and item[-1:] in ("k", "K"):
            item, scale = item[:-1], 1024
        if not item.isdigit() or int(item) <= 0:
            raise argparse.ArgumentTypeError(f"'{text}' is not a comma list of positive integers"
                                             + (" (k suffix = x1024)" if allow_k else ""))
        values.append(int(item) * scale)
    return values


def parse_args(argv):
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", help=f"comma list of built-in workloads: {', '.join(BUILT_IN)}")
    parser.add_argument("--config", help="a Hugging Face config.json, run as the workload named after its stem")
    parser.add_argument("--seq-len", required=True, type=lambda text: parse_int_list(text, True),
                        help="comma list of cached tokens S (k suffix = x1024), e.g. 4k,32k,128k")
    parser.add_argument("--batch", required=True, type=lambda text: parse_int_list(text, False),
                        help="comma list of batch sizes, e.g. 1,8,32")
    parser.add_argument("--iters", type=int, default=20, help="timed graph replays per point (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="eager steps before the capture (default 3)")
    parser.add_argument("-o", "--output", required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    if args.iters < 1:
        parser.error("--iters must be at least 1")
    if args.warmup < 1:
        parser.error("--warmup must be at least 1 (the capture needs one eager step before it)")
    if args.workload is None and args.config is None:
        parser.error("give --workload, --config or both")
    return args


def spec_from_config(path):
    """A ModelSpec from a Hugging Face config.json; the workload is named after the file's stem."""
    try:
        with open(path) as file:
            config = json.load(file)
    except (OSError, ValueError) as error:
        raise ArgumentError(f"cannot read --config {path}: {error}")
    missing = [key for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                               "vocab_size") if key not in config]
    if missing:
        raise ArgumentError(f"--config {path} lacks {', '.join(missing)}")
    try:
        hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
        spec = ModelSpec(
            name=os.path.splitext(os.path.basename(path))[0], hidden=hidden, layers=int(config["num_hidden_layers"]),
            heads=heads, kv_heads=int(config.get("num_key_value_heads") or heads),
            head_dim=int(config.get("head_dim") or hidden // max(heads, 1)),
            intermediate=int(config["intermediate_size"]), vocab=int(config["vocab_size"]),
            rope_theta=float(config.get("rope_theta") or 10000.0), tied=bool(config.get("tie_word_embeddings", False)))
    except (TypeError, ValueError) as error:
        raise ArgumentError(f"--config {path}: a size is not a number ({error})")
    check_spec(spec)
    return spec


def check_spec(spec):
    sizes = (spec.hidden, spec.layers, spec.heads, spec.kv_heads, spec.head_dim, spec.intermediate, spec.vocab)
    if min(sizes) <= 0:
        raise ArgumentError(f"workload {spec.name}: every size must be positive")
    if spec.heads % spec.kv_heads:
        raise ArgumentError(f"workload {spec.name}: {spec.heads} query heads are not a multiple of "
                            f"{spec.kv_heads} KV heads")
    if spec.head_dim % 2:
        raise ArgumentError(f"workload {spec.name}: RoPE needs an even head_dim, not {spec.head_dim}")


def workload_specs(args):
    specs = []
    for name in (args.workload.split(",") if args.workload else []):
        name = name.strip()
        if name not in BUILT_IN:
            raise ArgumentError(f"unknown workload '{name}' (built in: {', '.join(BUILT_IN)}; or use --config)")
        specs.append(BUILT_IN[name])
    if args.config:
        specs.append(spec_from_config(args.config))
    return specs


def weights_bytes(spec):
    """Bytes of every weight held; a tied LM head is the embedding matrix, counted once."""
    qkv_rows = (spec.heads + 2 * spec.kv_heads) * spec.head_dim
    per_layer = (qkv_rows * spec.hidden + spec.hidden * spec.heads * spec.head_dim
                 + 2 * spec.intermediate * spec.hidden + spec.hidden * spec.intermediate + 2 * spec.hidden)
    matrices = 1 if spec.tied else 2
    return BF16_BYTES * (spec.layers * per_layer + spec.hidden + matrices * spec.vocab * spec.hidden)


def kv_cache_bytes(spec, batch, seq_len):
    """Bytes of all layers' K and V, S + 1 tokens each."""
    return BF16_BYTES * spec.layers * 2 * batch * spec.kv_heads * (seq_len + 1) * spec.head_dim


def import_torch():
    """Imports PyTorch into the module global; a message on stderr and False when it or CUDA is missing."""
    global torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import torch as module
    except ImportError:
        print("peer-step: PyTorch is not installed here; nothing to measure", file=sys.stderr)
        return False
    if not module.cuda.is_available():
        print("peer-step: PyTorch sees no CUDA device; nothing to measure", file=sys.stderr)
        return False
    torch = module
    global step_torch
    step_torch = importlib.import_module("peer_step_torch")  # beside this script
    return True




def gigabytes(count_bytes):
    return f"{count_bytes / 1e9:.1f} GB"


def run_point(spec, weights, batch, seq_len, args):
    """One point's entry (without its workload/batch/seq_len keys); raises on any failure."""
    cache_bytes = kv_cache_bytes(spec, batch, seq_len)
    free_bytes = torch.cuda.mem_get_info()[0]
    if cache_bytes + SLACK_BYTES > free_bytes:
        return {"skipped": f"needs {gigabytes(cache_bytes + SLACK_BYTES)} (KV cache + 1 GiB slack; weights "
                           f"{gigabytes(weights_bytes(spec))} already held), {gigabytes(free_bytes)} free"}
    cache = step_torch.allocate_kv_cache(spec, batch, seq_len)
    buffers = step_torch.make_buffers(spec, weights, batch, seq_len)
    attend, attention, backend = step_torch.choose_attention(spec, cache, batch)
    graph = step_torch.capture_step(lambda: step_torch.decode_step(spec, weights, cache, buffers, attend), args.warmup)
    samples_s = step_torch.time_replays(graph, args.iters)
    entry = {"tp": 1, "dtype": "bf16", "step_s": statistics.median(samples_s), "step_samples_s": samples_s,
             "weights_bytes": weights_bytes(spec), "kv_cache_bytes": cache_bytes, "attention": attention}
    if backend is not None:
        entry["sdpa_backend"] = backend
    entry.update(step_torch.check_output(spec, buffers))
    return entry


def describe(error):
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:300]


def release_memory():
    """Frees what a finished (or failed) point left: Python garbage, then the allocator's cached blocks."""
    gc.collect()
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    except Exception:  # a sticky CUDA error: it shows up in the next point's entry
        pass


def run_point_safely(spec, weights, batch, seq_len, args):
    try:
        outcome = run_point(spec, weights, batch, seq_len, args)
    except Exception as error:  # out of memory, a backend refusing a shape, a capture failure ...
        outcome = {"error": describe(error)}
    release_memory()  # after the except block, so the traceback no longer holds the point's tensors
    return outcome


def load_weights(spec):
    """(weights or None, free bytes before them, error text or None): None without an error when they cannot
    fit with 1 GiB of slack."""
    release_memory()
    try:
        free_bytes = torch.cuda.mem_get_info()[0]
        if weights_bytes(spec) + SLACK_BYTES > free_bytes:
            return None, free_bytes, None
        return step_torch.allocate_weights(spec), free_bytes, None
    except Exception as error:
        failure = "allocating the weights: " + describe(error)
    release_memory()
    return None, 0, failure


def weightless_outcome(spec, batch, seq_len, free_bytes, failure):
    """The entry of a point whose workload's weights were not allocated."""
    if failure is not None:
        return {"error": failure}
    need_bytes = weights_bytes(spec) + kv_cache_bytes(spec, batch, seq_len) + SLACK_BYTES
    return {"skipped": f"needs {gigabytes(need_bytes)} (weights + KV cache + 1 GiB slack), "
                       f"{gigabytes(free_bytes)} free"}


def point_outcome_text(entry):
    if "step_s" in entry:
        return f"{entry['step_s'] * 1e3:.3f} ms"
    return "skipped: " + entry["skipped"] if "skipped" in entry else "error: " + entry["error"]


def run_workload(spec, args, document):
    """Every point of one workload, appended to document["results"] and written out one by one."""
    weights, free_bytes, failure = load_weights(spec)
    for batch, seq_len in [(batch, seq_len) for batch in args.batch for seq_len in args.seq_len]:
        entry = {"workload": spec.name, "batch": batch, "seq_len": seq_len}
        if weights is None:
            entry.update(weightless_outcome(spec, batch, seq_len, free_bytes, failure))
        else:
            entry.update(run_point_safely(spec, weights, batch, seq_len, args))
        document["results"].append(entry)
        print(f"peer-step: {spec.name} batch {batch} seq_len {seq_len}: {point_outcome_text(entry)}",
              file=sys.stderr, flush=True)
        write_document(document, args.output)
    del weights
    release_memory()


def provenance(args, argv):
    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"host": socket.gethostname(),
            "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": list(argv), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(),
            "sm_count": properties.multi_processor_count, "memory_bytes": properties.total_memory,
            "iters": args.iters, "warmup": args.warmup}


def write_document(document, path):
    """Rewritten after every point, so that a run cut short keeps what it measured."""
    with open(path, "w") as file:
        json.dump(document, file, indent=1)
        file.write("\n")


def print_table(results):
    print(f"{'workload':16} {'batch':>6} {'seq_len':>8} {'step ms':>10}")
    for entry in results:
        if "step_s" in entry:
            outcome = f"{entry['step_s'] * 1e3:10.3f}"
        else:
            outcome = "   skipped" if "skipped" in entry else "     error"
        print(f"{entry['workload']:16} {entry['batch']:6d} {entry['seq_len']:8d} {outcome}")


def main(argv):
    args = parse_args(argv[1:])
    try:
        specs = workload_specs(args)
    except ArgumentError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not import_torch():
        return 2
    torch.manual_seed(0)
    implementation = f"PyTorch {torch.__version__} eager ops + SDPA, one CUDA graph (scripts/peer-step.py)"
    document = {"kind": "treering-step", "implementation": implementation,
                "provenance": provenance(args, argv), "results": []}
    try:
        write_document(document, args.output)
    except OSError as error:
        print(f"error: cannot write {args.output}: {error}", file=sys.stderr)
        return 2
    with torch.no_grad():
        for spec in specs:
            run_workload(spec, args, document)
    print_table(document["results"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
