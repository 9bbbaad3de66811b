#!/usr/bin/env bash
# Fuzzes the input readers (the libFuzzer targets of topologies/fuzz and validate/fuzz) for a bounded time.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [BUILD_DIR]      # defaults: 60 s, build-fuzz
#
# Configures BUILD_DIR with clang and -DTREERING_FUZZ=ON (tests off), builds the fuzz targets only, and runs each
# for SECONDS_PER_TARGET on a corpus of its own under BUILD_DIR/fuzz/corpus/NAME (seeded from the project's files
# listed in BUILD_DIR/fuzz/NAME.seeds; the source tree is never written). Findings (crashes, sanitizer reports,
# uncaught exceptions, timeouts over 10 s, more than 2 GB of memory) are written under BUILD_DIR/fuzz/artifacts/NAME/,
# their paths printed; the exit status is then 1. Each log is BUILD_DIR/fuzz/logs/NAME.log.
#
# The build leaves out the CUDA toolkit (the readers do not need it; nvcc would only add build time).
# Environment: CXX (default clang++), TREERING_FUZZ_TARGETS (names, space-separated: a subset),
# JOBS (build parallelism, default nproc), TREERING_FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=2).
# To replay one input: BUILD_DIR/fuzz/NAME FILE.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
build_dir="${2:-build-fuzz}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [BUILD_DIR]  (seconds: a whole number >= 1, got '$seconds')" >&2
  exit 2
fi
case "$build_dir" in /*) ;; *) build_dir="$PWD/$build_dir" ;; esac
cxx="${CXX:-clang++}"
if ! command -v "$cxx" >/dev/null; then
  echo "scripts/fuzz.sh: $cxx not found; libFuzzer needs clang (Debian: apt-get install clang)" >&2
  exit 2
fi
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER="$cxx" -DTREERING_FUZZ=ON -DTREERING_BUILD_TESTS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build "$build_dir" --target treering_fuzzers -j "$jobs"

fuzz_dir="$build_dir/fuzz"
if [[ -n "${TREERING_FUZZ_TARGETS:-}" ]]; then
  read -r -a targets <<<"$TREERING_FUZZ_TARGETS"
else
  targets=()
  for seeds in "$fuzz_dir"/*.seeds; do targets+=("$(basename "$seeds" .seeds)"); done
fi
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "scripts/fuzz.sh: no fuzz targets in $fuzz_dir" >&2
  exit 1
fi

# Readable stacks: a symbolizer of the same LLVM when there is one.
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" ]]; then
  version="$("$cxx" -dumpversion 2>/dev/null | cut -d. -f1)"
  for candidate in "llvm-symbolizer-$version" llvm-symbolizer; do
    if command -v "$candidate" >/dev/null; then export ASAN_SYMBOLIZER_PATH="$(command -v "$candidate")"; break; fi
  done
fi
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

mkdir -p "$fuzz_dir/logs" "$fuzz_dir/work"
findings=()
summary=()
for name in "${targets[@]}"; do
  binary="$fuzz_dir/$name"
  [[ -x "$binary" ]] || { echo "scripts/fuzz.sh: $binary was not built" >&2; exit 1; }
  corpus="$fuzz_dir/corpus/$name"
  artifacts="$fuzz_dir/artifacts/$name"
  log="$fuzz_dir/logs/$name.log"
  mkdir -p "$corpus" "$artifacts"
  # The writable corpus: the seeds copied in once (names prefixed by their directory), then what libFuzzer adds.
  while IFS= read -r dir; do
    [[ -n "$dir" && -d "$dir" ]] || continue
    for file in "$dir"/*; do
      [[ -f "$file" ]] || continue
      target_file="$corpus/seed-$(basename "$dir")-$(basename "$file")"
      [[ -e "$target_file" ]] || cp "$file" "$target_file"
    done
  done <"$fuzz_dir/$name.seeds"
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
         -artifact_prefix="$artifacts/")
  [[ -f "$fuzz_dir/$name.dict" ]] && flags+=(-dict="$fuzz_dir/$name.dict")
  # shellcheck disable=SC2206  # word splitting intended: extra libFuzzer flags
  [[ -n "${TREERING_FUZZ_ARGS:-}" ]] && flags+=(${TREERING_FUZZ_ARGS})
  echo "== $name: ${seconds}s, corpus $corpus"
  status=0
  started=$SECONDS
  (cd "$fuzz_dir/work" && "$binary" "${flags[@]}" "$corpus") >"$log" 2>&1 || status=$?
  took=$((SECONDS - started))
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  [[ -z "$runs" ]] && runs="$(grep -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)"
  coverage="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -n 1 || true)"
  line="$name: ${runs:-?} executions in ${took} s${coverage:+, $coverage}"
  if [[ $status -ne 0 ]]; then
    artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
    [[ -z "$artifact" ]] && artifact="(no input written; see $log)"
    line="$line; FINDING (exit $status): $artifact"
    findings+=("$name: $artifact")
    grep -E 'ERROR: |runtime error: |SUMMARY: |==[0-9]+== ?ERROR|terminate called|what\(\): |treering fuzz check failed' "$log" | head -n 8 | sed 's/^/   /' || true
    echo "   log: $log"
  fi
  echo "   $line"
  summary+=("$line")
done

echo
echo "fuzzing summary (${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
if [[ ${#findings[@]} -gt 0 ]]; then
  echo "findings (replay with: $fuzz_dir/NAME INPUT):"
  printf '  %s\n' "${findings[@]}"
  exit 1
fi
echo "no findings"
