#!/usr/bin/env python3
"""The real decode step against its PyTorch peer and against the model: one row per point.

    python3 scripts/step-report.py DIR/step-realrun.json [--pytorch DIR/step-pytorch.json] [--cluster dgx-h100]
                                   [--treering build/bin/treering] [--markdown]

For each measured point (workload, batch, context, tp) it prints treering-realrun's step, the PyTorch step (and
their ratio), `treering predict --scope step` on one GPU of --cluster (the model's figure and its error against
realrun's step) and the error of each part (attention, projections, mlp, other, lm_head). Medians and the worst
of the errors close the table. Skipped and failed points are listed as such.
"""
import argparse
import json
import statistics
import subprocess
import sys

PARTS = ["attention", "projections", "mlp", "other", "lm_head"]


def load_points(path):
    with open(path) as f:
        document = json.load(f)
    return {(r["workload"], r["batch"], r["seq_len"], r.get("tp", 1)): r for r in document["results"]}


def predict(treering, cluster, workload, batch, seq_len, tp):
    command = [treering, "predict", "--cluster", cluster, "--nodes", "1", "--gpus-per-node", str(tp), "--tp", str(tp),
               "--cp", "1", "--workload", workload, "--batch", str(batch), "--seq-len", str(seq_len), "--scope", "step",
               "--algo", "tree", "--format", "json"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(command) + ": " + result.stderr.strip())
    row = json.loads(result.stdout)[0]
    return row["step_s"], {p: row["step"]["breakdown"][p + "_s"] for p in PARTS}


def error(predicted, measured):
    return (predicted - measured) / measured if measured > 0 else float("nan")


def summarize(name, values):
    if not values:
        return f"{name}: none"
    absolute = [abs(v) for v in values]
    return f"{name}: median {100 * statistics.median(absolute):.1f} %, worst {100 * max(absolute):.1f} % ({len(values)} points)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("realrun")
    parser.add_argument("--pytorch")
    parser.add_argument("--cluster", default="dgx-h100")
    parser.add_argument("--treering", default="build/bin/treering")
    arguments = parser.parse_args()
    measured = load_points(arguments.realrun)
    peer = load_points(arguments.pytorch) if arguments.pytorch else {}
    header = f"{'workload':<12} {'batch':>5} {'tokens':>7} {'tp':>2} {'realrun':>9} {'pytorch':>9} {'ratio':>6} {'model':>9} {'error':>7}  " + \
             " ".join(f"{p[:7]:>8}" for p in PARTS)
    print(header)
    ratios, errors, part_errors = [], [], {p: [] for p in PARTS}
    for key, row in measured.items():
        workload, batch, seq_len, tp = key
        label = f"{workload:<12} {batch:>5} {seq_len:>7} {tp:>2}"
        if "step_s" not in row:
            print(f"{label} {row.get('skipped', row.get('error', '?'))[:90]}")
            continue
        step_s = row["step_s"]
        other = peer.get(key, {})
        peer_s = other.get("step_s")
        ratio = step_s / peer_s if peer_s else None
        if ratio:
            ratios.append(ratio)
        model_s, model_parts = predict(arguments.treering, arguments.cluster, workload, batch, seq_len, tp)
        errors.append(error(model_s, step_s))
        cells = []
        for p in PARTS:
            e = error(model_parts[p], row["parts_s"][p])
            part_errors[p].append(e)
            cells.append(f"{100 * e:>+7.1f}%")
        print(f"{label} {1e3 * step_s:>7.3f}ms {(f'{1e3 * peer_s:.3f}ms' if peer_s else '-'):>9} "
              f"{(f'{ratio:.3f}' if ratio else '-'):>6} {1e3 * model_s:>7.3f}ms {100 * errors[-1]:>+6.1f}%  " + " ".join(cells))
    print()
    if ratios:
        print(f"realrun / pytorch: median {statistics.median(ratios):.3f}, worst {max(ratios):.3f} ({len(ratios)} points)")
    print(summarize("model vs realrun step", errors))
    for p in PARTS:
        print(summarize(f"  {p}", part_errors[p]))


if __name__ == "__main__":
    try:
        main()
    except (OSError, RuntimeError, KeyError, json.JSONDecodeError) as failure:
        print(f"error: {failure}", file=sys.stderr)
        sys.exit(2)
