# `check` run by `mpirun -np 2 smpipe_mpi` prints exactly what one smpipe process does (each rank runs every
# second seed; rank 0 gathers them and reports in seed order), as text and as JSON, for schedules that all
# finish and for schedules that all fail (the first failure's report and full run). cmake -P with SMPIPE,
# SMPIPE_MPI, MPIEXEC.
function(run out_var expect)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT code EQUAL expect)
    message(FATAL_ERROR "exit ${code}, expected ${expect}: ${ARGN}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
foreach(case "examples/mainloop;--seeds;5;0" "examples/deadlock_grid_sync_too_large;--seeds;3;2"
             "examples/mainloop;--seeds;5;--json;0" "catalogue/explicit_mbar_ring_parity;--seeds;4;--json;3")
  list(POP_BACK case expect)
  run(one ${expect} ${SMPIPE} check ${case})
  # Under mpirun a rank's non-zero exit becomes mpirun's; rank 0 reports the worst status as one process does.
  if(expect EQUAL 0)
    run(two 0 ${MPIEXEC} -np 2 --oversubscribe ${SMPIPE_MPI} check ${case})
  else()
    execute_process(COMMAND ${MPIEXEC} -np 2 --oversubscribe ${SMPIPE_MPI} check ${case} RESULT_VARIABLE code OUTPUT_VARIABLE two
                    ERROR_VARIABLE err TIMEOUT 120)
    if(code EQUAL 0 OR code MATCHES "timeout")
      message(FATAL_ERROR "check ${case} under mpirun gave '${code}'\n${two}\n${err}")
    endif()
  endif()
  if(NOT one STREQUAL two)
    message(FATAL_ERROR "check ${case}: the output differs:\n--- one process:\n${one}\n--- two ranks:\n${two}")
  endif()
  if(one STREQUAL "")
    message(FATAL_ERROR "check ${case}: no output")
  endif()
endforeach()
message(STATUS "mpirun check ok")
