#!/usr/bin/env bash
# The project's C++ style, .clang-format at the top, applied by `make format` and checked by `make format-check`
# (and by the ctest `style/clang-format`, so `make test` and CI refuse code that is not formatted).
# usage: scripts/format.sh [--check] [SOURCE_DIR]
# The files are git's tracked *.cpp, *.hpp and *.cu (in a tree without .git: the same names found under the
# module directories), so build trees and fetched code are never touched.
set -euo pipefail
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
cd "${1:-$(dirname "$0")/..}"
clang_format=${CLANG_FORMAT:-clang-format}
command -v "$clang_format" >/dev/null || { echo "format: $clang_format not found (make deps installs it)" >&2; exit 2; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.cu')
else
  mapfile -t files < <(find topologies model sim realrun validate cli -name '*.cpp' -o -name '*.hpp' -o -name '*.cu')
fi
if [ "$check" -eq 1 ]; then
  # --dry-run -Werror: one "file:line:col: error: code should be clang-formatted" per place, exit 1 if any.
  "$clang_format" --dry-run -Werror "${files[@]}"
  echo "format: ${#files[@]} files follow .clang-format"
else
  "$clang_format" -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
fi
