# Detects the optional parts: the CUDA toolkit and NCCL (for realrun's GPU backend) and MPI (for launching
# realrun across ranks). Nothing here is required: without them the build succeeds and says what was left out.
# Results: TREERING_HAVE_CUDA / _NCCL / _MPI (ON/OFF), targets CUDA::cudart, treering::nccl, MPI::MPI_CXX, and
# TREERING_*_STATUS strings for the configure summary.

if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  set(TREERING_HAVE_CUDA ON)
  set(TREERING_CUDA_STATUS "found ${CUDAToolkit_VERSION} (${CUDAToolkit_LIBRARY_DIR})")
else()
  set(TREERING_HAVE_CUDA OFF)
  set(TREERING_CUDA_STATUS "not found: realrun's GPU backend is left out (set CUDAToolkit_ROOT to enable it)")
endif()

set(TREERING_HAVE_NCCL OFF)
set(TREERING_NCCL_STATUS "not found: NCCL collectives are left out (set NCCL_ROOT to enable them)")
if(TREERING_HAVE_CUDA)
  find_path(TREERING_NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(TREERING_NCCL_LIBRARY nccl HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  if(TREERING_NCCL_INCLUDE_DIR AND TREERING_NCCL_LIBRARY)
    add_library(treering::nccl UNKNOWN IMPORTED)
    set_target_properties(treering::nccl PROPERTIES IMPORTED_LOCATION ${TREERING_NCCL_LIBRARY}
                                                    INTERFACE_INCLUDE_DIRECTORIES ${TREERING_NCCL_INCLUDE_DIR})
    set(TREERING_HAVE_NCCL ON)
    set(TREERING_NCCL_STATUS "found (${TREERING_NCCL_LIBRARY})")
  endif()
endif()

find_package(MPI QUIET COMPONENTS CXX)
if(MPI_CXX_FOUND)
  set(TREERING_HAVE_MPI ON)
  set(TREERING_MPI_STATUS "found ${MPI_CXX_VERSION}")
else()
  set(TREERING_HAVE_MPI OFF)
  set(TREERING_MPI_STATUS "not found: realrun's multi-rank runs are left out")
endif()
