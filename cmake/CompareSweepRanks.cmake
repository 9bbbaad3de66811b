# ctest script: a sweep run serially and under `mpirun -np 2` must write byte-identical files (issue 7).
# -DTREERING=... -DMPIEXEC=... -DMPIEXEC_FLAGS=... -DOUT=prefix
set(axes sweep --cluster dgx-h100 --nodes 1,2,4 --seq-len 80k:5.12M:x2 --batch 1,8 --engine model,sim)
execute_process(COMMAND ${TREERING} ${axes} -o ${OUT}-serial.csv RESULT_VARIABLE serial_rc)
if(NOT serial_rc EQUAL 0)
  message(FATAL_ERROR "the serial sweep failed (${serial_rc})")
endif()
separate_arguments(flags UNIX_COMMAND "${MPIEXEC_FLAGS}")
execute_process(COMMAND ${MPIEXEC} -np 2 ${flags} ${TREERING} ${axes} -o ${OUT}-ranks.csv RESULT_VARIABLE ranks_rc
                ERROR_VARIABLE ranks_err)
if(NOT ranks_rc EQUAL 0)
  message(FATAL_ERROR "the sweep under mpirun -np 2 failed (${ranks_rc}): ${ranks_err}")
endif()
# Both processes must have found their rank and split the cases: were the launcher's environment missed, each
# would run the whole sweep alone as rank 0 of 1 and write the same file, and the comparison below would pass.
if(NOT ranks_err MATCHES "wrote 420 rows to [^\n]* \\(2 ranks\\)")
  message(FATAL_ERROR "the sweep under mpirun -np 2 did not run as 2 ranks; it said: ${ranks_err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}-serial.csv ${OUT}-ranks.csv RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "the sweep under mpirun -np 2 wrote a different file than the serial sweep")
endif()
file(STRINGS ${OUT}-ranks.csv lines)
list(LENGTH lines count)
if(NOT count EQUAL 421)  # a header + 3 node counts x 7 lengths x 2 batches x 5 algorithms x 2 engines
  message(FATAL_ERROR "expected 421 lines, found ${count}")
endif()
file(GLOB leftovers ${OUT}-ranks.csv.part-*)
if(leftovers)
  message(FATAL_ERROR "parts left behind: ${leftovers}")
endif()
