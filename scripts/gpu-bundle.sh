#!/usr/bin/env bash
# Packs what `make gpu-check` needs into a folder that runs on a GPU machine with no package registry: the project
# built here with CUDA for the GPU's architecture, the binaries with the shared libraries they load (but the C
# library, the CUDA driver, NCCL, cuDNN and cuBLAS (540 MB), which the GPU machine has), Open MPI's plugins and help files, and
# env.sh, which points the loader and Open MPI there. On the GPU machine, from the project's root:
#     bash scripts/gpu-check.sh --bundle .gpurun           (or: source .gpurun/env.sh; treering-realrun info)
# Usage: bash scripts/gpu-bundle.sh [--arch 90] [--build-dir build-gpu] [--out .gpurun]
# The folder is git-excluded; `du` of it is printed (a lent machine takes 64 MiB with the working tree).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
arch=90
build=build-gpu
out=.gpurun
while [[ $# -gt 0 ]]; do
  case "$1" in
    --arch) arch=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "gpu-bundle: unknown option '$1' (--arch, --build-dir, --out)" >&2; exit 2 ;;
  esac
done
[[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null || { echo "gpu-bundle: no CUDA toolkit (nvcc) here" >&2; exit 2; }

cmake -S . -B "$build" -DTREERING_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target treering-realrun realrun_gpu_tests >/dev/null
grep -q "cuda (NCCL" <("$build/bin/treering-realrun" info 2>&1 || true) ||
  { echo "gpu-bundle: $build/bin/treering-realrun has no cuda backend" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/ompi"
exclude="$(git rev-parse --git-common-dir)/info/exclude"
grep -qx "/$out/" "$exclude" 2>/dev/null || echo "/$out/" >> "$exclude"
cp "$build/bin/treering-realrun" "$build/tests/realrun_gpu_tests" "$out/bin/"

# The libraries a file loads, but those the GPU machine has itself (glibc, the driver, NCCL, cuDNN, cuBLAS).
system='/(libc|libm|libpthread|libdl|librt|libgcc_s|ld-linux[^/]*)\.so|/libcuda\.so|/libnccl|/libcudnn|/libcublas'
copy_libraries() {
  for file in "$@"; do ldd "$file" 2>/dev/null | awk '/=> \// {print $3}'; done | sort -u | grep -v -E "$system" |
    while read -r library; do [[ -e "$out/lib/$(basename "$library")" ]] || cp -L "$library" "$out/lib/"; done
}
copy_libraries "$out"/bin/*

# Open MPI (treering-realrun calls MPI_Init even for one rank): its plugins, PMIx's, and its help texts.
multiarch=/usr/lib/x86_64-linux-gnu
plugins=ompi/lib/x86_64-linux-gnu/openmpi/lib  # Debian's layout under the prefix that OPAL_PREFIX relocates
mkdir -p "$out/$plugins"
cp -r "$multiarch/openmpi/lib/openmpi3" "$out/$plugins/"
[[ -d /usr/share/openmpi ]] && mkdir -p "$out/ompi/share" && cp -r /usr/share/openmpi "$out/ompi/share/"
[[ -d "$multiarch/pmix2" ]] && cp -r "$multiarch/pmix2" "$out/pmix2"
copy_libraries $(find "$out/ompi" "$out/pmix2" -name '*.so' 2>/dev/null)
strip --strip-unneeded "$out"/bin/* "$out"/lib/*.so* 2>/dev/null || true

cat > "$out/env.sh" <<ENV
# Sourced on the GPU machine from the project's root (bash scripts/gpu-check.sh --bundle $out does it).
bundle=\$PWD/$out
# NCCL, cuDNN and cuBLAS: the machine's own (PyTorch's environment carries them), else the CUDA toolkit's.
nvidia=\$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(list(nvidia.nccl.__path__)[0]))' 2>/dev/null || true)
cublas=\$( (find "\${nvidia:-/nonexistent}" /usr/local/cuda/lib64 -name 'libcublasLt.so.13*' 2>/dev/null || true) | head -1)
export LD_LIBRARY_PATH=\$bundle/lib\${nvidia:+:\$nvidia/nccl/lib:\$nvidia/cudnn/lib}\${cublas:+:\$(dirname "\$cublas")}:/usr/local/cuda/lib64:\${LD_LIBRARY_PATH:-}
export OPAL_PREFIX=\$bundle/ompi OMPI_MCA_mca_base_component_path=\$bundle/$plugins/openmpi3
export PMIX_MCA_mca_base_component_path=\$bundle/pmix2/lib/pmix OMPI_MCA_ess_singleton_isolated=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=\$bundle/bin:\$PATH TREERING_BUNDLE_ARCH=$arch
# The tests were built at $root and read their data from there.
[[ -e "$root" ]] || { mkdir -p "$(dirname "$root")" && ln -s "\$PWD" "$root"; }
ENV
du -sh "$out" | awk -v arch="$arch" '{print "gpu-bundle: " $1 " in " $2 " (sm_" arch ")"}'
