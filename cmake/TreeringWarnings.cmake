# treering_warnings(TARGET): the project's own code compiles warning-free under -Wall -Wextra.
function(treering_warnings target)
  # C++ only: CUDA sources go through nvcc, whose generated host code the host compiler's -Wpedantic dislikes.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>)
  if(TREERING_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()

# treering_module(NAME SOURCES...): a module library treering_NAME with alias treering::NAME, public
# headers under NAME/include.
function(treering_module name)
  add_library(treering_${name} STATIC ${ARGN})
  add_library(treering::${name} ALIAS treering_${name})
  target_include_directories(treering_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  treering_warnings(treering_${name})
endfunction()

# treering_tests(NAME SOURCES... LIBS ... [LABEL L] [SKIP_RETURN_CODE C]): a doctest executable NAME_tests, registered with ctest.
# Tests find data through TREERING_SOURCE_DIR, never the working directory.
function(treering_tests name)
  if(NOT TREERING_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "LABEL;SKIP_RETURN_CODE" "SOURCES;LIBS" ${ARGN})
  add_executable(${name}_tests ${ARG_SOURCES})
  target_link_libraries(${name}_tests PRIVATE ${ARG_LIBS} doctest::doctest)
  target_compile_definitions(${name}_tests PRIVATE TREERING_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                                   TREERING_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set_target_properties(${name}_tests PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  treering_warnings(${name}_tests)
  set(skip "")
  if(ARG_SKIP_RETURN_CODE)  # a binary that exits with it reports its tests as skipped (e.g. no GPU here)
    set(skip SKIP_RETURN_CODE ${ARG_SKIP_RETURN_CODE})
  endif()
  if(ARG_LABEL)  # e.g. gpu: ctest -L gpu runs them, ctest -LE gpu leaves them out
    doctest_discover_tests(${name}_tests TEST_PREFIX "${name}/" ADD_LABELS 0 PROPERTIES LABELS ${ARG_LABEL} ${skip})
  else()
    doctest_discover_tests(${name}_tests TEST_PREFIX "${name}/" ADD_LABELS 0)
  endif()
endfunction()
