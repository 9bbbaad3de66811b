#!/usr/bin/env bash
# make gpu-check: turns a GPU into committed measurements, with one command. Three ways to run it:
#   bash scripts/gpu-check.sh                      on a GPU machine that can build: builds for its GPU in build-gpu/,
#                                                  measures into validate/data/measured/<gpu>-<date>/, then analyses;
#   bash scripts/gpu-check.sh --bundle .gpurun     on a GPU machine without a package registry, from the folder
#        [--out DIR]                               scripts/gpu-bundle.sh packed elsewhere: measures only;
#   bash scripts/gpu-check.sh --analyse DIR        anywhere (no GPU): treering calibrate and validate on DIR.
#   --only GROUPS                                  a comma list of what to measure (default: all of them): tests,
#                                                  sanitizers, attention, loopback-bench, decode, step.
# What it measures: provenance.json (GPU, driver, clocks, power limit, CUDA, NCCL, PyTorch); the GPU tests;
# compute-sanitizer memcheck and racecheck on a short loopback decode and the attention bench; bench hbm; bench
# attention for paper-mha16 (MHA), llama3.2-1b (head dim 64), llama3.1-8b, -70b and -405b (GQA g 4, 8, 16) from 1k to 128k tokens; the same
# shapes through PyTorch's SDPA when PyTorch is there (scripts/peer-attention.py); decodes on one rank (16k, 128k,
# 1M tokens); the loopback's all-reduce alone and its decodes of every algorithm at 2, 4 and 8 virtual ranks; whole
# decode steps of llama3.2-1b and llama3.1-8b (batch 1, 8, 32; 4k, 32k, 128k tokens), loopback TP 2 and 4 steps,
# and the same steps through PyTorch (scripts/peer-step.py) when PyTorch is there.
# Each step's seconds go to steps.txt.
# Without a usable GPU it stops at once with exit code 2; a failed test or sanitizer finding makes it exit 1 at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

bundle="" out="" analyse="" only="tests,sanitizers,attention,loopback-bench,decode,step"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bundle) bundle=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --analyse|--analyze) analyse=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option '$1' (--bundle DIR, --out DIR, --analyse DIR, --only GROUPS)" >&2; exit 2 ;;
  esac
done

for group in ${only//,/ }; do
  case "$group" in
    tests|sanitizers|attention|loopback-bench|decode|step) ;;
    *) echo "gpu-check: unknown group '$group' in --only (tests, sanitizers, attention, loopback-bench, decode, step)" >&2; exit 2 ;;
  esac
done
wanted() { [[ ",$only," == *",$1,"* ]]; }

run() {
  echo "+ $*" >&2
  "$@"
}

analyse() {  # calibrate on the attention benches and the steps; validate the decodes (loopback ones on loopback-h100)
  local dir=$1 treering=${TREERING:-build/bin/treering}
  [[ -x "$treering" ]] || { echo "gpu-check: $treering is not built (make build)" >&2; exit 2; }
  if [[ -e "$dir/step-realrun.json" ]]; then  # the step's parts, fitted on the main points, checked on the held-out ones
    run "$treering" calibrate "$dir/step-realrun.json" --cluster dgx-h100 --nodes 1 -o "$dir/calibrated-step-dgx-h100.yaml" |
      tee "$dir/calibrate-step.txt"
    [[ -e "$dir/step-heldout.json" ]] &&
      run "$treering" validate --cluster "$dir/calibrated-step-dgx-h100.yaml" "$dir/step-heldout.json" | tee "$dir/validate-step-heldout.txt"
    [[ -e "$dir/step-pytorch.json" ]] && run python3 scripts/step-report.py "$dir/step-realrun.json" --pytorch "$dir/step-pytorch.json" \
      --treering "$treering" | tee "$dir/step-report.txt"
  fi
  compgen -G "$dir/attention-*.json" >/dev/null || return 0
  run "$treering" calibrate "$dir"/attention-*.json --cluster dgx-h100 --nodes 1 -o "$dir/calibrated-dgx-h100.yaml" |
    tee "$dir/calibrate.txt"
  # The attention by shape fitted on 1k, 16k and 128k tokens only, checked on every point (the others held out).
  run "$treering" calibrate "$dir"/attention-*.json --cluster dgx-h100 --nodes 1 --tokens 1k,16k,128k \
    -o "$dir/calibrated-3-lengths-dgx-h100.yaml" >/dev/null
  run "$treering" validate --cluster "$dir/calibrated-3-lengths-dgx-h100.yaml" "$dir"/attention-*.json | tee "$dir/validate-attention-heldout.txt"
  [[ -e "$dir/decode-1rank.json" ]] || return 0
  run "$treering" validate --cluster "$dir/calibrated-dgx-h100.yaml" "$dir/decode-1rank.json" --engine model | tee "$dir/validate.txt"
  # The loopback's P virtual ranks share the GPU (loopback-h100: 1/P of it each); its attention calibrated on one rank.
  run "$treering" calibrate "$dir"/attention-*.json --cluster loopback-h100 --gpus-per-node 1 -o "$dir/calibrated-loopback-h100.yaml" >/dev/null
  for file in "$dir"/decode-loopback-*.json; do
    [[ -e "$file" ]] || continue
    local ranks=${file##*-}
    ranks=${ranks%.json}
    run "$treering" validate --cluster "$dir/calibrated-loopback-h100.yaml" --gpus-per-node "$ranks" "$file" --engine model |
      tee "$dir/validate-loopback-$ranks.txt"
  done
}

if [[ -n "$analyse" ]]; then
  analyse "$analyse"
  exit 0
fi

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no usable NVIDIA GPU here (nvidia-smi is missing or lists no device); nothing to measure" >&2
  exit 2
fi
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
slug=$(echo "$gpu_name" | tr '[:upper:]' '[:lower:]' | sed -e 's/nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//')
out=${out:-validate/data/measured/${slug}-$(date -u +%Y-%m-%d)}
mkdir -p "$out"
: > "$out/steps.txt"
failures=()

if [[ -n "$bundle" ]]; then
  [[ -f "$bundle/env.sh" ]] || { echo "gpu-check: $bundle/env.sh is missing (bash scripts/gpu-bundle.sh makes it)" >&2; exit 2; }
  # shellcheck disable=SC1091
  source "$bundle/env.sh"
  [[ "${TREERING_BUNDLE_ARCH:-}" == "$arch" ]] ||
    echo "gpu-check: warning: the bundle was built for sm_${TREERING_BUNDLE_ARCH:-?}, this GPU is sm_$arch" >&2
  realrun=$(command -v treering-realrun)
  gpu_tests=(realrun_gpu_tests)
else
  command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]] || { echo "gpu-check: no CUDA toolkit (nvcc) here" >&2; exit 2; }
  build=${GPU_BUILD_DIR:-build-gpu}
  bash scripts/deps.sh
  run cmake -S . -B "$build" -DTREERING_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_BUILD_TYPE=Release
  run cmake --build "$build" -j "$(nproc)"
  realrun="$build/bin/treering-realrun"
  gpu_tests=(ctest --test-dir "$build" -L gpu --output-on-failure)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
"$realrun" info | grep -q "cuda (NCCL" || { echo "gpu-check: $realrun has no cuda backend" >&2; "$realrun" info >&2; exit 1; }
echo "gpu-check: $gpu_name (sm_$arch) -> $out" >&2

step() {  # step NAME COMMAND...: runs it, times it, and records a failure without stopping the rest
  local name=$1 started=$SECONDS
  shift
  if run "$@"; then echo "$name $((SECONDS - started)) s ok" >> "$out/steps.txt"
  else echo "$name $((SECONDS - started)) s FAILED" >> "$out/steps.txt"; failures+=("$name"); fi
}

python3 - "$out/provenance.json" "$realrun" <<'PY'
import datetime, json, subprocess, sys
def run(command):
    return subprocess.run(command, capture_output=True, text=True).stdout.strip()
names = "name,driver_version,compute_cap,memory.total,clocks.max.sm,clocks.max.memory,clocks.sm,power.limit,persistence_mode"
values = [v.strip() for v in run(["nvidia-smi", "--query-gpu=" + names, "--format=csv,noheader,nounits"]).splitlines()[0].split(",")]
torch = run([sys.executable, "-c", "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())"])
record = {"gpu": dict(zip(names.split(","), values)), "treering_realrun_info": run([sys.argv[2], "info"]).splitlines(),
          "git": run(["git", "rev-parse", "HEAD"]) or "(no git here: see treering_realrun_info)", "torch": torch or None,
          "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
          "units": {"memory.total": "MiB", "clocks": "MHz", "power.limit": "W"}}
json.dump(record, open(sys.argv[1], "w"), indent=2)
PY

wanted tests && step gpu-tests "${gpu_tests[@]}"

if ! wanted sanitizers; then
  :
elif command -v compute-sanitizer >/dev/null 2>&1; then
  algos=ring,tree,tree-fused,tree-lse,allgather-merge
  sanitize() {  # sanitize TOOL NAME COMMAND...: clean when the summary says 0 errors / 0 hazards
    local tool=$1 name=$2
    shift 2
    compute-sanitizer --tool "$tool" --error-exitcode 3 "$@" > "$out/sanitizer-$tool-$name.log" 2>&1
  }
  for tool in memcheck racecheck; do
    step "$tool-loopback" sanitize "$tool" loopback "$realrun" decode --backend cuda --loopback 2 --algo "$algos" --seq-len 3000 \
      --repeats 1 --warmup 1
    step "$tool-attention" sanitize "$tool" attention "$realrun" bench attention --backend cuda --workload llama3.1-70b \
      --tokens 1000,5000 --bytes 64M --iters 1 --warmup 1
  done
else
  echo "sanitizers 0 s SKIPPED (no compute-sanitizer)" >> "$out/steps.txt"
fi

have_torch=false
python3 -c "import torch" 2>/dev/null && have_torch=true
if wanted attention; then
  step bench-hbm "$realrun" bench hbm --backend cuda --bytes 1G --iters 20 --warmup 2 -o "$out/hbm.json"
  for workload in paper-mha16 llama3.2-1b llama3.1-8b llama3.1-70b llama3.1-405b; do  # head dims 128 and 64, groups 1-16
    step "bench-attention-$workload" "$realrun" bench attention --backend cuda --workload "$workload" --bytes 1G --tokens 1k:128k:x2 \
      --iters 20 --warmup 2 -o "$out/attention-$workload.json"
  done
  $have_torch && step peer-attention python3 scripts/peer-attention.py "$out"/attention-*.json -o "$out/peer-attention.json"
fi
if wanted loopback-bench; then
  for ranks in 2 8; do  # the loopback's own rings alone, to calibrate its fabric from measurements of its own
    step "bench-allreduce-loopback-$ranks" "$realrun" bench allreduce --backend cuda --loopback "$ranks" --sizes 64:16M:x4 --iters 20 \
      --warmup 2 -o "$out/allreduce-loopback-$ranks.json"
  done
fi
if wanted decode; then
  step decode-1rank "$realrun" decode --backend cuda --algo tree,ring --seq-len 16k,128k,1M --repeats 10 -o "$out/decode-1rank.json"
  for ranks in 2 4 8; do
    step "decode-loopback-$ranks" "$realrun" decode --backend cuda --loopback "$ranks" --algo ring,tree,tree-fused,tree-lse,allgather-merge \
      --seq-len 16k,128k --repeats 5 -o "$out/decode-loopback-$ranks.json"
  done
fi
if wanted step; then  # contexts in powers of two, as serving engines size them: 4,096 cached tokens and the new one
  step_points=(--workload llama3.2-1b,llama3.1-8b --seq-len 4096,32768,131072 --batch 1,8,32)
  step step-realrun "$realrun" step "${step_points[@]}" --iters 20 --warmup 3 -o "$out/step-realrun.json"
  # Held out of the calibration: other batches and contexts, to validate the calibrated model on.
  step step-heldout "$realrun" step --workload llama3.2-1b,llama3.1-8b --seq-len 8192,65536 --batch 2,16 --iters 20 --warmup 3 \
    -o "$out/step-heldout.json"
  step step-loopback "$realrun" step --workload llama3.1-8b --tp 2,4 --batch 1,8 --seq-len 4096 --iters 10 -o "$out/step-loopback.json"
  $have_torch && step step-pytorch python3 scripts/peer-step.py "${step_points[@]}" --iters 20 --warmup 3 -o "$out/step-pytorch.json"
fi

cat "$out/steps.txt" >&2
if [[ -z "$bundle" ]]; then
  TREERING="$build/bin/treering" analyse "$out"
else
  echo "gpu-check: measured into $out; fetch it, then here: bash scripts/gpu-check.sh --analyse <its folder>" >&2
fi
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "gpu-check: FAILED: ${failures[*]}" >&2
  exit 1
fi
echo "gpu-check: done; commit $out and put the figures in realrun/README.md" >&2
