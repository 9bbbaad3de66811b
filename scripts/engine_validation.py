#!/usr/bin/env python3
"""The serving-engine validation of validate/README.md ("Serving engines"), rerun from the committed data.

For each public engine table in validate/data/engine-runs it reports
  - uncalibrated: `treering validate --impl ENGINE` (the engine's preset) on every run: median |error| and the
    share of runs inside the preset's band;
  - calibrated from 3 runs: `treering calibrate` on three runs of the table (pick_three: the runs nearest (smallest
    TP, batch 1, 128 tokens), (middle TP, 16, 512) and (largest TP, 64, 2,048)), then `treering validate` of the
    fitted profile on every other run.
Usage: scripts/engine_validation.py [TREERING]   (default build/bin/treering; run from the repository root)
"""
import json
import os
import subprocess
import sys
import tempfile

SETS = [  # file, cluster, engine preset; the preset named first is the one fitted to that file (not a check)
    ("llm-inference-bench-vllm-a100.csv", "polaris-a100", "vllm"),
    ("llm-inference-bench-vllm-h100.csv", "dgx-h100", "vllm"),
    ("llm-inference-bench-vllm-mi300x.csv", "mi300x", "vllm"),
    ("llm-inference-bench-trtllm-a100.csv", "polaris-a100", "trtllm"),
    ("llm-inference-bench-trtllm-h100.csv", "dgx-h100", "trtllm"),
    ("lmdeploy-turbomind-a100-80g-v0.1.0a1.csv", "dgx-a100", "lmdeploy-turbomind"),
]
FITTED_ON = {"llm-inference-bench-vllm-a100.csv", "llm-inference-bench-trtllm-a100.csv",
             "lmdeploy-turbomind-a100-80g-v0.1.0a1.csv"}
TARGETS = [(1, 128), (16, 512), (64, 2048)]


def run(treering, *args):
    result = subprocess.run([treering, *args, "--format", "json"], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"treering {' '.join(args)} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def split(path):
    """The header and comment lines, and the data rows of a table."""
    head, rows = [], []
    for line in open(path):
        (rows if rows or (head and not line.startswith("#")) else head).append(line)
    header, rows = rows[0], rows[1:]
    return head + [header], rows


def pick_three(header_line, rows):
    """Three runs spread over the table: the smallest TP at batch 1 and 128 tokens, the middle TP at batch 16 and 512,
    the largest TP at batch 64 and 2,048 (the nearest run to each), as a user would pick a few runs to calibrate."""
    names = header_line.strip().split(",")
    field = lambda row, *keys: next(row.strip().split(",")[names.index(k)] for k in keys if k in names)
    tps = sorted({int(field(r, "tp")) for r in rows})
    targets = [(tps[0], 1, 128), (tps[len(tps) // 2], 16, 512), (tps[-1], 64, 2048)]
    chosen = []
    for tp, batch, tokens in targets:
        best = min((r for r in rows if r not in chosen),
                   key=lambda r: (abs(int(field(r, "tp")) - tp), abs(int(field(r, "batch")) - batch),
                                  abs(int(field(r, "input_len", "prompt_tokens")) - tokens)))
        chosen.append(best)
    return chosen


def main(treering="build/bin/treering"):
    print("| engine table | cluster | runs | uncalibrated median | inside band | calibrated on 3: median of the rest |")
    print("|---|---|---|---|---|---|")
    for name, cluster, impl in SETS:
        path = os.path.join("validate/data/engine-runs", name)
        plain = run(treering, "validate", "--cluster", cluster, "--nodes", "1", "--impl", impl, path)["summary"]
        head, rows = split(path)
        three = pick_three(head[-1], rows)
        with tempfile.TemporaryDirectory() as tmp:
            fit_path, rest_path = os.path.join(tmp, "three.csv"), os.path.join(tmp, "rest.csv")
            open(fit_path, "w").writelines(head + three)
            open(rest_path, "w").writelines(head + [r for r in rows if r not in three])
            profile = os.path.join(tmp, "fitted.yaml")
            run(treering, "calibrate", fit_path, "--cluster", cluster, "--nodes", "1", "--impl", impl, "-o", profile)
            rest = run(treering, "validate", "--cluster", cluster, "--nodes", "1", "--impl", profile, rest_path)
        note = " (the preset's own fit)" if name in FITTED_ON else ""
        print(f"| {name}{note} | {cluster} | {plain['runs']} | {100 * plain['median_abs_rel_error']:.1f} % | "
              f"{100 * plain['inside_band_fraction']:.0f} % (+/-{100 * plain['band']:.1f} %) | "
              f"{100 * rest['summary']['median_abs_rel_error']:.1f} % ({rest['summary']['runs']} runs) |")


if __name__ == "__main__":
    main(*sys.argv[1:])
