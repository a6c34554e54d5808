# Installs smpipe into a fresh prefix, builds api/example against the installed CMake package (the way an
# application would), runs it from elsewhere and checks what it prints. cmake -P with BUILD, SRC, WORK, CXX,
# FLAGS (the compiler flags of this build: a sanitizer build links sanitized libraries).
file(REMOVE_RECURSE ${WORK})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY /)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
step(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
step(${CMAKE_COMMAND} -S ${SRC}/api/example -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_CXX_COMPILER=${CXX}
     "-DCMAKE_CXX_FLAGS=${FLAGS}")
step(${CMAKE_COMMAND} --build ${WORK}/build)
step(${WORK}/build/pick_stages 1024 1024 1024)
foreach(expected "models from ${WORK}/prefix/share/smpipe/kernels" "STAGES=2: " "STAGES=4: " "fastest: STAGES=" "EMPTY_COUNT=256: exit 2" "deadlock at cycle")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "pick_stages printed no '${expected}':\n${out}")
  endif()
endforeach()
message(STATUS "api example ok:\n${out}")
