"""Builds the compiled half of the `treering` package (treering/_treering) with the project's CMake, for
`python3 -m pip install .` (pyproject.toml has the package's metadata).

The extension is CMake's target `treering_python`, built for the interpreter running pip. By default in a fresh
CMake build directory under setuptools' build_temp (Release, tests off); with TREERING_CMAKE_BUILD_DIR set to
an existing, configured build directory (`make build`'s `build/`), that one is built and nothing is configured
again, so an install next to a build compiles nothing twice (the module must then be for this interpreter).
"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("TREERING_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = pathlib.Path(build_dir).resolve()
            if not (build_dir / "CMakeCache.txt").exists():
                raise RuntimeError(f"TREERING_CMAKE_BUILD_DIR={build_dir} is not a configured CMake build directory")
        else:
            build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                            "-DTREERING_BUILD_TESTS=OFF", f"-DPython3_EXECUTABLE={sys.executable}"], check=True)
        jobs = str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "treering_python", "-j", jobs], check=True)
        built = sorted((build_dir / "python" / "treering").glob("_treering*.so"))
        if not built:
            raise RuntimeError(f"CMake built no _treering*.so under {build_dir / 'python' / 'treering'}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


# setuptools' own files go to build-python/ (ignored by git), not into build/ (the CMake build) or the sources.
BUILD_BASE = ROOT / "build-python"
BUILD_BASE.mkdir(exist_ok=True)
setup(ext_modules=[Extension("treering._treering", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": str(BUILD_BASE)}, "egg_info": {"egg_base": str(BUILD_BASE)}})
