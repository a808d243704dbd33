# ctest driver: install the built rungs into a scratch prefix, then configure, build and run
# the consumer against it (find_package); with MODE=subdir, only configure it through
# add_subdirectory (building would recompile the whole library a second time).
file(REMOVE_RECURSE ${WORK})
if(MODE STREQUAL "subdir")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -G Ninja -DRUNGS_SOURCE=${REPO}
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "add_subdirectory consumer failed to configure")
  endif()
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -G Ninja -DCMAKE_PREFIX_PATH=${WORK}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "find_package consumer failed to configure")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "find_package consumer failed to build")
endif()
execute_process(COMMAND ${WORK}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer returned ${rc}")
endif()
