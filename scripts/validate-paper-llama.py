#!/usr/bin/env python3
"""treering's predictions of the Tree Attention paper's Llama decoding runs (Tables 1 and 2) against the paper.

Each row of validate/data/paper-llama/tree-attention-2408.04093.csv is predicted with `treering predict --impl
paper-torch-llama --tokens 9 --prefill` (the generate(x, 10) call the paper times: the prefill gives the first
new token, then 9 decode steps, llama_flash_sp.py generate(); PyTorch eager) for tree and ring; the table prints both times and the ring/tree ratio, measured and predicted, and
the median |error| of the ratio (nearest rank, as treering's statistics define it).

Usage: scripts/validate-paper-llama.py [--treering build/bin/treering] [--format table|csv] [--cluster-file NAME=FILE ...]

--cluster-file replaces the cluster a row names (its `cluster` column: a preset, or a cluster file's path from the
repository's root) by another cluster: FILE is a preset name or a cluster file's path. Example: the 2x RTX 4090
rows on the uncalibrated preset, --cluster-file validate/data/nccl-pcie/rtx4090-2gpu-kalavai.yaml=rtx4090-pcie.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "validate", "data", "paper-llama", "tree-attention-2408.04093.csv")


def cluster_argument(row, cluster_files):
    """The --cluster a row is predicted on: a replacement given on the command line, else the row's preset name or
    cluster file (a path from the repository's root)."""
    if row["cluster"] in cluster_files:
        return cluster_files[row["cluster"]]
    if row["cluster"].endswith(".yaml"):
        return os.path.join(HERE, "..", row["cluster"])
    return row["cluster"]


def generation_s(treering, row, cluster_files):
    command = [treering, "predict", "--cluster", cluster_argument(row, cluster_files), "--nodes", row["nodes"],
               "--gpus-per-node", row["gpus_per_node"], "--workload", row["workload"], "--seq-len", row["seq_len"],
               "--algo", "tree,ring", "--impl", "paper-torch-llama", "--tokens", "9", "--prefill", "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"validate-paper-llama.py: error: {row['table']} {row['gpus_label']} {row['seq_label']}: "
                 f"{done.stderr.strip() or 'treering predict failed'}")
    results = json.loads(done.stdout)
    return {r["algo"]: r["generation_s"] for r in results}


def median(values):  # nearest rank: the ceil(n/2)-th smallest
    ordered = sorted(values)
    return ordered[math.ceil(len(ordered) / 2) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treering", default=os.path.join(HERE, "..", "build", "bin", "treering"))
    parser.add_argument("--format", choices=["table", "csv"], default="table")
    parser.add_argument("--cluster-file", action="append", default=[], metavar="NAME=FILE",
                        help="predict the rows on cluster NAME with cluster FILE (a preset or a file) instead")
    args = parser.parse_args()
    cluster_files = {}
    for mapping in args.cluster_file:
        name, sep, path = mapping.partition("=")
        if not sep or not name or not path:
            parser.error(f"--cluster-file wants NAME=FILE, got '{mapping}'")
        cluster_files[name] = path
    with open(DATA, newline="") as f:
        rows = list(csv.DictReader(f))
    unused = sorted(set(cluster_files) - {row["cluster"] for row in rows})
    if unused:
        parser.error(f"--cluster-file: no row is predicted on {', '.join(unused)} (the `cluster` column names "
                     f"{', '.join(sorted({row['cluster'] for row in rows}))})")
    out = []
    for row in rows:
        predicted = generation_s(args.treering, row, cluster_files)
        measured_ratio = float(row["ring_s"]) / float(row["tree_s"])
        predicted_ratio = predicted["ring"] / predicted["tree"]
        out.append({"table": row["table"], "gpus": row["gpus_label"], "seq": row["seq_label"],
                    "tree_s": float(row["tree_s"]), "tree_pred_s": predicted["tree"],
                    "ring_s": float(row["ring_s"]), "ring_pred_s": predicted["ring"],
                    "ratio": measured_ratio, "ratio_pred": predicted_ratio,
                    "ratio_error": predicted_ratio / measured_ratio - 1})
    if args.format == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(out[0]))
        writer.writeheader()
        writer.writerows(out)
        return
    print(f"{'source':8} {'GPUs':19} {'seq':>6} {'tree s':>7} {'pred':>7} {'ring s':>7} {'pred':>7} "
          f"{'ring/tree':>9} {'pred':>6} {'error':>7}")
    for r in out:
        print(f"{r['table']:8} {r['gpus']:19} {r['seq']:>6} {r['tree_s']:7.2f} {r['tree_pred_s']:7.2f} "
              f"{r['ring_s']:7.2f} {r['ring_pred_s']:7.2f} {r['ratio']:9.2f} {r['ratio_pred']:6.2f} "
              f"{100 * r['ratio_error']:+6.1f}%")
    for name, key in (("ring/tree ratio", "ratio_error"),):
        errors = [abs(r[key]) for r in out]
        print(f"{name}: {len(errors)} rows, median |error| {100 * median(errors):.1f}%, max {100 * max(errors):.1f}%")
    for name, measured, predicted in (("tree", "tree_s", "tree_pred_s"), ("ring", "ring_s", "ring_pred_s")):
        errors = [abs(r[predicted] / r[measured] - 1) for r in out]
        print(f"{name} seconds: median |error| {100 * median(errors):.1f}%, max {100 * max(errors):.1f}%")


if __name__ == "__main__":
    main()
