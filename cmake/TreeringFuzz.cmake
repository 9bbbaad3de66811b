# libFuzzer targets for the input readers (YAML clusters and workloads, unit strings, nccl-tests logs and CSVs,
# treering-realrun JSON). Off by default; `scripts/fuzz.sh` (and `make fuzz`) configure a build of their own
# with clang and this option on.
#
# When TREERING_FUZZ is ON every C++ source of the project (the libraries above all) is compiled with coverage
# instrumentation for libFuzzer plus AddressSanitizer and UndefinedBehaviorSanitizer, and undefined behaviour
# aborts instead of printing and going on. The regular tests can be off in such a build
# (-DTREERING_BUILD_TESTS=OFF): the fuzz build only needs the fuzz targets and what they link.
#
# treering_fuzz_target(NAME SOURCES src... LIBS lib... [CORPUS dir...] [DICT file]): an executable
# ${PROJECT_BINARY_DIR}/fuzz/NAME linked with libFuzzer's main. The seed directories (CORPUS) and the dictionary
# (DICT) are written to ${PROJECT_BINARY_DIR}/fuzz/NAME.seeds and NAME.dict for scripts/fuzz.sh, which copies
# the seeds into a writable corpus under the build directory. Every fuzz target is part of `treering_fuzzers`
# (`cmake --build BUILD --target treering_fuzzers`).
# The C++ compiler's ID is known only after project(); this file is included after it.

option(TREERING_FUZZ "Build the libFuzzer targets (clang only; instruments the project with ASan and UBSan)" OFF)

if(TREERING_FUZZ)
  # AppleClang ships no libFuzzer runtime; LLVM's clang does.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TREERING_FUZZ=ON needs LLVM clang for libFuzzer; the C++ compiler is ${CMAKE_CXX_COMPILER_ID} "
                        "(${CMAKE_CXX_COMPILER}). Configure with -DCMAKE_CXX_COMPILER=clang++ in a build directory "
                        "of its own (scripts/fuzz.sh does).")
  endif()

  # The runtime must be there too (Debian: the libclang-rt-*-dev / libclang-common-*-dev package of the same
  # clang); say so here rather than at the first link.
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
  check_cxx_source_compiles([[
    #include <cstddef>
    #include <cstdint>
    extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
  ]] TREERING_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT TREERING_HAVE_LIBFUZZER)
    message(FATAL_ERROR "TREERING_FUZZ=ON: ${CMAKE_CXX_COMPILER} cannot link with -fsanitize=fuzzer,address,undefined "
                        "(is the libFuzzer/compiler-rt runtime of this clang installed?)")
  endif()

  # Every C++ target from here on (the subdirectories included after this file): coverage for libFuzzer, ASan,
  # UBSan with no recovery, frame pointers and line tables for readable stacks. C++ only: CUDA goes through nvcc.
  set(TREERING_FUZZ_COMPILE_OPTIONS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                                    -fno-omit-frame-pointer -gline-tables-only)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${TREERING_FUZZ_COMPILE_OPTIONS}>")
  # Instrumented objects need the sanitizer runtimes in whatever links them (tests, the CLI, benches).
  add_link_options("$<$<LINK_LANGUAGE:CXX>:-fsanitize=address,undefined>")

  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  if(NOT TARGET treering_fuzzers)
    add_custom_target(treering_fuzzers)
  endif()
  message(STATUS "treering: fuzz targets on (libFuzzer, ASan, UBSan); build them with --target treering_fuzzers")
endif()

function(treering_fuzz_target name)
  if(NOT TREERING_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "DICT" "SOURCES;LIBS;CORPUS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "treering_fuzz_target(${name}): no SOURCES")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  treering_warnings(${name})
  add_dependencies(treering_fuzzers ${name})

  # What scripts/fuzz.sh needs to run it: the seed directories, one absolute path per line, and the dictionary.
  set(seeds "")
  foreach(dir IN LISTS ARG_CORPUS)
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT IS_DIRECTORY "${dir}")
      message(FATAL_ERROR "treering_fuzz_target(${name}): corpus directory ${dir} does not exist")
    endif()
    string(APPEND seeds "${dir}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/fuzz/${name}.seeds "${seeds}")
  if(ARG_DICT)
    get_filename_component(dict "${ARG_DICT}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    configure_file(${dict} ${PROJECT_BINARY_DIR}/fuzz/${name}.dict COPYONLY)
  else()
    file(REMOVE ${PROJECT_BINARY_DIR}/fuzz/${name}.dict)
  endif()
endfunction()
