#!/usr/bin/env bash
# The calibrate-and-validate loop on this machine, as a user runs it (README, "Calibrate against your hardware"):
#   1. benchmark what the decodes will use, at the plans' own sizes (treering-realrun bench --for-plan): send/recv
#      at the ring's block sizes, all-reduce at the tree's message sizes, attention with as many ranks running
#      at once as the decode runs (each twice: two processes, two placements on the cores, one fit over both);
#   2. fit a one-node cluster to them (treering calibrate: size bands where the rate changes);
#   3. run the decodes for real, twice (treering-realrun decode);
#   4. compare (treering validate --engine model,sim) with the bound the caller gives.
# ctest's loop/calibrate-and-validate runs it with --max-factor 20 (a check of the machinery: every step runs,
# every error is finite, no algorithm's median case is off by 20x: a unit or a missing phase is 1000x or 2x per
# layer, while other work loading the machine between the benchmarks and the decodes can move it by several times); `make validate-local` with --max-error 0.2 (the accuracy report).
#
# Usage: scripts/calibration-loop.sh BIN_DIR OUT_DIR [treering validate flags...]
# Environment: LOOP_RANKS (2), LOOP_SEQ_LEN (2000,8000), LOOP_ALGOS (tree,tree-lse,ring), MPIRUN (mpirun),
# MPIRUN_FLAGS (--oversubscribe when the machine has fewer cores than ranks).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BIN_DIR OUT_DIR [treering validate flags...]" >&2
  exit 2
fi
bin=$1 out=$2
shift 2
ranks=${LOOP_RANKS:-2}
seq_len=${LOOP_SEQ_LEN:-2000,8000}
algos=${LOOP_ALGOS:-tree,tree-lse,ring}
mpirun=${MPIRUN:-mpirun}
if [[ -z ${MPIRUN_FLAGS+x} ]]; then
  MPIRUN_FLAGS=""
  if [[ $(nproc) -lt $ranks ]]; then MPIRUN_FLAGS=--oversubscribe; fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"

run() {
  echo "+ $*" >&2
  "$@"
}
plan=(--for-plan --algo "$algos" --seq-len "$seq_len")
ranks_run=("$mpirun" -np "$ranks" $MPIRUN_FLAGS)

for copy in 1 2; do
  run "${ranks_run[@]}" "$bin/treering-realrun" bench sendrecv "${plan[@]}" --iters 10 --warmup 3 -o "$out/sendrecv-$copy.json"
  run "${ranks_run[@]}" "$bin/treering-realrun" bench allreduce "${plan[@]}" --iters 10 --warmup 3 -o "$out/allreduce-$copy.json"
done
for copy in 1 2; do
  run "${ranks_run[@]}" "$bin/treering-realrun" bench attention "${plan[@]}" --iters 5 --warmup 2 -o "$out/attention-$copy.json"
done
run "$bin/treering" calibrate "$out"/sendrecv-{1,2}.json "$out"/allreduce-{1,2}.json "$out"/attention-{1,2}.json \
  --cluster rtx4090-pcie --nodes 1 -o "$out/localhost.yaml"
for copy in 1 2; do
  run "${ranks_run[@]}" "$bin/treering-realrun" decode --algo "$algos" --seq-len "$seq_len" --repeats 9 -o "$out/decode-$copy.json"
done
run "$bin/treering" validate --cluster "$out/localhost.yaml" "$out"/decode-{1,2}.json --engine model,sim "$@"
run "$bin/treering" validate --cluster "$out/localhost.yaml" "$out"/decode-{1,2}.json --engine model,sim --format json "$@" \
  > "$out/validate.json"
echo "loop: the files are in $out"
