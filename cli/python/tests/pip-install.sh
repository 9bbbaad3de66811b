#!/usr/bin/env bash
# `python3 -m pip install .` in a fresh virtual environment gives `import treering` with the whole API (ctest
# python/pip-install). Usage: pip-install.sh PYTHON SOURCE_DIR CMAKE_BUILD_DIR
# The package index is not reachable here: --no-build-isolation (Debian's setuptools, seen through
# --system-site-packages) and --no-index. TREERING_CMAKE_BUILD_DIR points setup.py at the build `make` just made,
# so that the install builds the module's target there (up to date: nothing compiles twice) instead of
# configuring a second build; without it setup.py configures and builds one of its own (see setup.py).
set -euo pipefail
python=$1 source_dir=$2 build_dir=$3
venv=$(mktemp -d /tmp/treering-venv.XXXXXX)
trap 'rm -rf "$venv"' EXIT
"$python" -m venv --system-site-packages "$venv"
TREERING_CMAKE_BUILD_DIR=$build_dir "$venv/bin/python" -m pip install --no-build-isolation --no-index --quiet "$source_dir"
cd "$venv"  # not the source tree: the import must find the installed package
env -u PYTHONPATH "$venv/bin/python" - "$venv" <<'PY'
import pathlib, sys
import treering
venv = pathlib.Path(sys.argv[1]).resolve()
assert venv in pathlib.Path(treering.__file__).resolve().parents, f"imported {treering.__file__}, not the installed package"
two = treering.load_cluster("dgx-h100", nodes=2)
rows = treering.predict(two, "128k", workload="llama3.1-8b", algos="tree", tp=8, cp=2, scope="step")
assert rows[0]["tp"] == 8 and rows[0]["cp"] == 2 and rows[0]["step_s"] > 0, rows[0]
assert treering.simulate(two, "128k", workload="llama3.1-8b", algos="tree", tp=8, cp=2)[0]["engine"] == "sim"
assert treering.collective(two, "allreduce", "1M")[0]["time_s"] > 0
assert treering.plan(two, "128k", confirm=0)["ranked"]
for name in ("calibrate", "validate", "sweep", "tune", "sensitivity", "plot"):
    assert callable(getattr(treering, name)), name
print("installed:", treering.__file__)
PY
