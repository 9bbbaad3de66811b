# ctest script: predict, simulate and sweep give byte-identical output when run again (issue 9).
# -DTREERING=... -DOUT=prefix
set(commands  # one entry per command, its arguments separated by |
    "predict|--cluster|dgx-h100|--nodes|4|--seq-len|80k:5.12M:x2|--format|json"
    "simulate|--cluster|rtx4090-pcie|--nodes|2|--seq-len|80k,1M|--format|json"
    "simulate|--cluster|dgx-h100|--nodes|2|--seq-len|1001|--algo|ring|--trace|${OUT}-trace.json"
    "sweep|--cluster|dgx-h100|--nodes|1,2|--seq-len|80k:640k:x2|--batch|1,3|--engine|model,sim|--jobs|2|--format|csv"
    "tune|--cluster|dgx-h100|--nodes|2|--seq-len|1M|--format|json")
foreach(line IN LISTS commands)  # arguments separated by | inside an entry
  string(REPLACE "|" ";" command "${line}")
  string(REPLACE "|" " " shown "${line}")
  foreach(run first second)
    execute_process(COMMAND ${TREERING} ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE ${run} ERROR_QUIET)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "treering ${shown} exited ${rc}")
    endif()
    if(EXISTS ${OUT}-trace.json)
      file(READ ${OUT}-trace.json trace)
      string(APPEND ${run} "${trace}")
      file(REMOVE ${OUT}-trace.json)
    endif()
  endforeach()
  if(NOT first STREQUAL second)
    message(FATAL_ERROR "treering ${shown}: the second run printed something else than the first")
  endif()
  string(LENGTH "${first}" bytes)
  message(STATUS "same ${bytes} bytes twice: treering ${shown}")
endforeach()
