#!/usr/bin/env bash
# Installs the Debian packages treering needs to build and test. Does nothing when all are present;
# safe to run again. Uses sudo when not root. CUDA and NCCL are optional and not installed here
# (they come with the CUDA toolkit under /usr/local/cuda when a machine has one).
set -euo pipefail

packages=(
  g++ cmake make pkg-config       # toolchain
  libyaml-cpp-dev                 # topologies: cluster files
  libboost-graph-dev              # topologies: the topology graph
  libcli11-dev                    # cli
  nlohmann-json3-dev              # cli: JSON output
  doctest-dev                     # tests
  libeigen3-dev                   # validate: fits
  libsimgrid-dev                  # sim: the discrete-event engine
  libopenmpi-dev openmpi-bin      # realrun: multi-rank runs
  libcairo2-dev                   # cli: the main job's figure (PNG and SVG)
  python3-matplotlib python3-pandas jupyter-nbconvert python3-nbconvert python3-nbformat python3-nbclient
  python3-ipykernel               # notebooks: run headless in make test, make figures
  pybind11-dev python3-dev        # the Python module (cli/python)
  python3-venv python3-pip python3-setuptools python3-wheel  # pip install . (its test: python/pip-install)
  clang                           # make fuzz: libFuzzer comes with it
  clang-format                    # make format, make format-check (and the ctest style/clang-format)
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps: done"
