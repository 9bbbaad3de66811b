#!/usr/bin/env bash
# make gpu-check: turns a lent NVIDIA GPU into committed measurements, with one command.
#   1. builds for the GPU present (its compute capability) in build-gpu/, and checks that the cuda backend is in;
#   2. runs the GPU tests (ctest -L gpu: the kernel against the reference, every algorithm on 1-4 loopback ranks);
#   3. bench hbm (device copy), bench attention (paper-mha16 = MHA, llama3.1-8b = GQA g 4, llama3.1-70b = GQA g 8,
#      1k to 128k tokens), decodes on one rank, and loopback decodes of every algorithm at 2, 4 and 8 virtual ranks;
#   4. writes them to validate/data/measured/<gpu>-<date>/ with provenance.json (GPU, driver, CUDA, NCCL, clocks),
#      then `treering calibrate` on the attention benchmarks and `treering validate` of the one-rank decodes.
# Without a usable GPU or CUDA toolkit it stops at once with a message and exit code 2.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no usable NVIDIA GPU here (nvidia-smi is missing or lists no device); nothing to measure" >&2
  exit 2
fi
if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "gpu-check: no CUDA toolkit (nvcc) here; the cuda backend cannot be built" >&2
  exit 2
fi

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
slug=$(echo "$gpu_name" | tr '[:upper:]' '[:lower:]' | sed -e 's/nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//')
out=validate/data/measured/${slug}-$(date -u +%Y-%m-%d)
build=${GPU_BUILD_DIR:-build-gpu}
jobs=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() {
  echo "+ $*" >&2
  "$@"
}

echo "gpu-check: $gpu_name (sm_$arch) -> $out" >&2
bash scripts/deps.sh
run cmake -S . -B "$build" -DTREERING_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="$arch"
run cmake --build "$build" -j "$jobs"
realrun="$build/bin/treering-realrun"
if ! "$realrun" info | grep -q "cuda (NCCL"; then
  echo "gpu-check: the build has no cuda backend:" >&2
  "$realrun" info >&2
  exit 1
fi
run ctest --test-dir "$build" -L gpu --output-on-failure

mkdir -p "$out"
python3 - "$out/provenance.json" "$realrun" <<'PY'
import json, subprocess, sys, datetime
def query(fields):
    text = subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
    return [value.strip() for value in text.splitlines()[0].split(",")]
names = "name,driver_version,compute_cap,memory.total,clocks.max.sm,clocks.max.memory,clocks.sm,power.limit"
values = query(names)
info = subprocess.run([sys.argv[2], "info"], capture_output=True, text=True).stdout
nvcc = subprocess.run(["bash", "-c", "nvcc --version || /usr/local/cuda/bin/nvcc --version"], capture_output=True, text=True).stdout
record = {"gpu": dict(zip(names.split(","), values)), "treering_realrun_info": info.strip().splitlines(),
          "nvcc": nvcc.strip().splitlines()[-1] if nvcc.strip() else "",
          "git": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
          "date_utc": datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z",
          "units": {"memory.total": "MiB", "clocks": "MHz", "power.limit": "W"}}
json.dump(record, open(sys.argv[1], "w"), indent=2)
PY

run "$realrun" bench hbm --backend cuda --bytes 1G --iters 20 --warmup 2 -o "$out/hbm.json"
for workload in paper-mha16 llama3.1-8b llama3.1-70b; do
  run "$realrun" bench attention --backend cuda --workload "$workload" --bytes 1G --tokens 1k:128k:x2 --iters 20 --warmup 2 \
    -o "$out/attention-$workload.json"
done
algos=ring,tree,tree-fused,tree-lse,allgather-merge
run "$realrun" decode --backend cuda --algo tree,ring --seq-len 16k,128k,1M --repeats 10 -o "$out/decode-1rank.json"
for ranks in 2 4 8; do
  run "$realrun" decode --backend cuda --loopback "$ranks" --algo "$algos" --seq-len 16k,128k --repeats 5 \
    -o "$out/decode-loopback-$ranks.json"
done

treering="$build/bin/treering"
run "$treering" calibrate "$out"/attention-*.json --cluster dgx-h100 --nodes 1 -o "$out/calibrated-dgx-h100.yaml"
run "$treering" validate --cluster "$out/calibrated-dgx-h100.yaml" "$out/decode-1rank.json" --engine model \
  | tee "$out/validate.txt"
echo "gpu-check: done; commit $out and put the kernel's fraction of copy bandwidth (attention-*.json) in realrun/README.md" >&2
