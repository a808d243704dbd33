# NCCL for rungs::dist. Sets NCCL_INCLUDE_DIR (the directory of nccl.h), NCCL_LIBRARY (libnccl.so, or
# libnccl.so.2 by its full path where no unversioned name exists, as in the Python wheel) and
# NCCL_FOUND, looking in this order:
#   1. NCCL_ROOT (a CMake or environment variable): <root>/include/nccl.h, <root>/lib*/libnccl.so*;
#   2. the system's default paths (the libnccl-dev package, CUDA's directories);
#   3. the nvidia-nccl-cu13 (or -cu12) Python wheel of python3 on PATH or of Python3_EXECUTABLE:
#      <site-packages>/nvidia/nccl/{include,lib}.
set(RUNGS_NCCL_HINTS)
if(DEFINED NCCL_ROOT)
  list(APPEND RUNGS_NCCL_HINTS "${NCCL_ROOT}")
endif()
if(DEFINED ENV{NCCL_ROOT})
  list(APPEND RUNGS_NCCL_HINTS "$ENV{NCCL_ROOT}")
endif()
set(RUNGS_NCCL_LIB_NAMES nccl libnccl.so.2)
set(RUNGS_NCCL_LIB_SUFFIXES lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu)

if(RUNGS_NCCL_HINTS)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${RUNGS_NCCL_HINTS} PATH_SUFFIXES include NO_DEFAULT_PATH)
  find_library(NCCL_LIBRARY NAMES ${RUNGS_NCCL_LIB_NAMES} HINTS ${RUNGS_NCCL_HINTS}
    PATH_SUFFIXES ${RUNGS_NCCL_LIB_SUFFIXES} NO_DEFAULT_PATH)
endif()
if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY NAMES ${RUNGS_NCCL_LIB_NAMES} HINTS ${CUDAToolkit_LIBRARY_DIR})
endif()
if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
  # nvidia.nccl is a namespace package (no __file__): its directory is the first of __path__.
  set(RUNGS_NCCL_PYTHONS python3)
  if(DEFINED Python3_EXECUTABLE)
    list(PREPEND RUNGS_NCCL_PYTHONS "${Python3_EXECUTABLE}")
  endif()
  foreach(py IN LISTS RUNGS_NCCL_PYTHONS)
    execute_process(COMMAND "${py}" -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE RUNGS_NCCL_WHEEL_DIR OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND EXISTS "${RUNGS_NCCL_WHEEL_DIR}/include/nccl.h")
      unset(NCCL_INCLUDE_DIR CACHE)
      unset(NCCL_LIBRARY CACHE)
      find_path(NCCL_INCLUDE_DIR nccl.h HINTS "${RUNGS_NCCL_WHEEL_DIR}/include" NO_DEFAULT_PATH)
      find_library(NCCL_LIBRARY NAMES ${RUNGS_NCCL_LIB_NAMES} HINTS "${RUNGS_NCCL_WHEEL_DIR}/lib" NO_DEFAULT_PATH)
      if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
        break()
      endif()
    endif()
  endforeach()
endif()

set(NCCL_FOUND FALSE)
set(NCCL_VERSION "")
if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" RUNGS_NCCL_VERSION_LINES REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${part} +([0-9]+)" _ "${RUNGS_NCCL_VERSION_LINES}")
    set(RUNGS_NCCL_${part} "${CMAKE_MATCH_1}")
  endforeach()
  set(NCCL_VERSION "${RUNGS_NCCL_MAJOR}.${RUNGS_NCCL_MINOR}.${RUNGS_NCCL_PATCH}")
  # ncclBfloat16 and ncclCommGetAsyncError's behaviour here need 2.10 or newer.
  if(NCCL_VERSION VERSION_LESS 2.10)
    message(STATUS "rungs: NCCL ${NCCL_VERSION} at ${NCCL_INCLUDE_DIR} is older than 2.10: not used")
  else()
    set(NCCL_FOUND TRUE)
  endif()
endif()
