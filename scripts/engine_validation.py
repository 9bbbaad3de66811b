#!/usr/bin/env python3
"""The serving-engine validation of validate/README.md ("Serving engines"), rerun from the committed data.

For each public engine table in validate/data/engine-runs (or the rows of one the preset was, or was not, fitted
to: vllm-rocm's Llama 2 and Mixtral rows of the MI300X table) it reports
  - uncalibrated: `treering validate --impl ENGINE` (the engine's preset) on every run: median |error| and the
    share of runs inside the preset's band;
  - calibrated from 3 runs: `treering calibrate` on three runs of the table (pick_three: the runs nearest (smallest
    TP, batch 1, 128 tokens), (middle TP, 16, 512) and (largest TP, 64, 2,048) among those the table does not
    contradict: `treering validate` lists a run slower than a larger run of its setup as mismeasured), then
    `treering validate` of the fitted profile on every other run.
Usage: scripts/engine_validation.py [TREERING]   (default build/bin/treering; run from the repository root)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# file, cluster, engine preset, the rows taken (a regular expression on the model column; None: all), whether the
# preset was fitted to those rows (then the row is no check of it). vllm-rocm was fitted to the MI300X table's Llama 2
# and Mixtral rows and is checked on its other models.
FITTED_ROCM = "Llama-2|Mixtral"
SETS = [
    ("llm-inference-bench-vllm-a100.csv", "polaris-a100", "vllm", None, True),
    ("llm-inference-bench-vllm-h100.csv", "dgx-h100", "vllm", None, False),
    ("llm-inference-bench-vllm-mi300x.csv", "mi300x", "vllm", None, False),
    ("llm-inference-bench-vllm-mi300x.csv", "mi300x", "vllm-rocm", "!" + FITTED_ROCM, False),
    ("llm-inference-bench-vllm-mi300x.csv", "mi300x", "vllm-rocm", FITTED_ROCM, True),
    ("llm-inference-bench-trtllm-a100.csv", "polaris-a100", "trtllm", None, True),
    ("llm-inference-bench-trtllm-h100.csv", "dgx-h100", "trtllm", None, False),
    ("lmdeploy-turbomind-a100-80g-v0.1.0a1.csv", "dgx-a100", "lmdeploy-turbomind", None, True),
]
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
    the largest TP at batch 64 and 2,048 (the nearest run to each), as a user would pick a few runs to calibrate.
    `rows` are the table's runs less those its sweep contradicts."""
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


def selected(rows, pattern):
    """The rows whose model matches `pattern` ("!P": those that do not); all with None."""
    if pattern is None:
        return rows
    keep = not pattern.startswith("!")
    expression = re.compile(pattern.lstrip("!"))
    return [r for r in rows if bool(expression.search(r.split(",")[2])) == keep]


def main(treering="build/bin/treering"):
    print("| engine table | cluster | preset | runs | uncalibrated median | inside band | calibrated on 3: median of the rest |")
    print("|---|---|---|---|---|---|---|")
    for name, cluster, impl, pattern, fitted in SETS:
        head, rows = split(os.path.join("validate/data/engine-runs", name))
        rows = selected(rows, pattern)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, name)
            open(path, "w").writelines(head + rows)
            validation = run(treering, "validate", "--cluster", cluster, "--nodes", "1", "--impl", impl, path)
            plain = validation["summary"]
            # the runs the table contradicts ("FILE line N"), not picked: a user calibrates on runs that hold up
            lines = (head + rows)
            contradicted = [lines[int(c["file"].rsplit(" line ", 1)[1]) - 1] for c in validation["contradicted"]]
            three = pick_three(head[-1], [r for r in rows if r not in contradicted])
            fit_path, rest_path = os.path.join(tmp, "three.csv"), os.path.join(tmp, "rest.csv")
            open(fit_path, "w").writelines(head + three)
            open(rest_path, "w").writelines(head + [r for r in rows if r not in three])
            profile = os.path.join(tmp, "fitted.yaml")
            run(treering, "calibrate", fit_path, "--cluster", cluster, "--nodes", "1", "--impl", impl, "-o", profile)
            rest = run(treering, "validate", "--cluster", cluster, "--nodes", "1", "--impl", profile, rest_path)
        rows_note = "" if pattern is None else (" other models" if pattern.startswith("!") else " " + pattern)
        note = rows_note + (" (the preset's own fit)" if fitted else "")
        runs = f"{plain['runs']}" + (f" (+{plain['contradicted']} contradicted)" if plain["contradicted"] else "")
        print(f"| {name}{note} | {cluster} | {impl} | {runs} | {100 * plain['median_abs_rel_error']:.1f} % | "
              f"{100 * plain['inside_band_fraction']:.0f} % (+/-{100 * plain['band']:.1f} %) | "
              f"{100 * rest['summary']['median_abs_rel_error']:.1f} % ({rest['summary']['runs']} runs) |")


if __name__ == "__main__":
    main(*sys.argv[1:])
