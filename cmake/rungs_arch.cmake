# Which device code each source of the library gets (included by CMakeLists.txt after the rungs target
# and its settings). The one rule: the Hopper-only sources are compiled for sm_90a only.
#
# A Hopper-only source is one whose kernels are sm_90a code: it includes a header of src/detail/sm90/
# (the sm_90a instructions), directly or through another header of src/. Every other source is compiled for each entry of
# CMAKE_CUDA_ARCHITECTURES; the Hopper-only ones for its sm_90a entries alone (an object library, whose
# objects go into librungs.a), so a list such as "80-real;86-real;89-real;90a-real;90-virtual" costs them
# one compilation, not five: on other GPUs their rungs throw rungs::Unsupported (require_sm90a) and
# `auto` picks rungs that run there. Where the list has no sm_90a entry, they are compiled like the
# others (their device code is then a trap that never runs) and RUNGS_HAVE_SM90A stays undefined.

#
# Register spills and local memory (ptxas -warn-spills, -warn-lmem-usage, errors under
# -Werror=all-warnings) are held for the sm_90 code the kernels are tuned for. A list with other
# real architectures (a wheel's sm_80, sm_86, sm_89) keeps them for the Hopper-only objects and
# drops them elsewhere: there the same kernels may spill a few bytes that no test of ours measures,
# and an install must not fail on it.

set(RUNGS_SM90A_ARCHITECTURES "")
set(rungs_other_real FALSE)
foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
  if(arch MATCHES "^90a")
    list(APPEND RUNGS_SM90A_ARCHITECTURES "${arch}")
  elseif(NOT arch MATCHES "^90" AND NOT arch MATCHES "-virtual$")
    set(rungs_other_real TRUE)
  endif()
endforeach()
set(rungs_spill_flags "-Xptxas=-warn-spills,-warn-lmem-usage")
get_target_property(rungs_warning_options rungs_warnings INTERFACE_COMPILE_OPTIONS)
string(FIND "${rungs_warning_options}" "${rungs_spill_flags}" rungs_has_spill_flags)
if(rungs_other_real AND rungs_has_spill_flags GREATER -1)
  string(REPLACE "${rungs_spill_flags};" "" rungs_warning_options "${rungs_warning_options}")
  string(REPLACE "${rungs_spill_flags}" "" rungs_warning_options "${rungs_warning_options}")
  set_target_properties(rungs_warnings PROPERTIES INTERFACE_COMPILE_OPTIONS "${rungs_warning_options}")
else()
  set(rungs_spill_flags "")  # held everywhere already (or a debugging build, which has none)
endif()

if(RUNGS_SM90A_ARCHITECTURES)
  target_compile_definitions(rungs PRIVATE RUNGS_HAVE_SM90A=1)

  # The headers of src/detail/sm90/, and those of src/ that include one, directly or through each other.
  file(GLOB_RECURSE rungs_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.cuh ${PROJECT_SOURCE_DIR}/src/*.hpp)
  set(rungs_hopper_headers "")
  foreach(h IN LISTS rungs_headers)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/src ${h})
    if(rel MATCHES "^detail/sm90/")
      list(APPEND rungs_hopper_headers "${rel}")
    endif()
  endforeach()
  set(rungs_grew TRUE)
  while(rungs_grew)
    set(rungs_grew FALSE)
    foreach(h IN LISTS rungs_headers)
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/src ${h})
      if(rel IN_LIST rungs_hopper_headers)
        continue()
      endif()
      file(STRINGS ${h} includes REGEX "^#include \"")
      foreach(line IN LISTS includes)
        string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
        if(inc IN_LIST rungs_hopper_headers)
          list(APPEND rungs_hopper_headers "${rel}")
          set(rungs_grew TRUE)
          break()
        endif()
      endforeach()
    endforeach()
  endwhile()

  # The library's CUDA sources that include one of them: out of rungs, into rungs_sm90a.
  get_target_property(rungs_all_sources rungs SOURCES)
  set(rungs_sm90a_sources "")
  set(rungs_other_sources "")
  foreach(src IN LISTS rungs_all_sources)
    set(hopper FALSE)
    if(src MATCHES "\\.cu$")
      file(STRINGS ${src} includes REGEX "^#include \"")
      foreach(line IN LISTS includes)
        string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
        if(inc IN_LIST rungs_hopper_headers)
          set(hopper TRUE)
          break()
        endif()
      endforeach()
    endif()
    if(hopper)
      list(APPEND rungs_sm90a_sources "${src}")
    else()
      list(APPEND rungs_other_sources "${src}")
    endif()
  endforeach()

  if(rungs_sm90a_sources)
    set_property(TARGET rungs PROPERTY SOURCES ${rungs_other_sources})
    add_library(rungs_sm90a OBJECT ${rungs_sm90a_sources})
    # Compiled as the library's own sources are: its include directories, definitions and options
    # (the warnings too), its launcher (scripts/cuda_launcher.sh's check on wgmma serialization).
    target_include_directories(rungs_sm90a PRIVATE $<TARGET_PROPERTY:rungs,INCLUDE_DIRECTORIES>)
    target_compile_definitions(rungs_sm90a PRIVATE $<TARGET_PROPERTY:rungs,COMPILE_DEFINITIONS>)
    target_compile_options(rungs_sm90a PRIVATE $<TARGET_PROPERTY:rungs,COMPILE_OPTIONS>)
    target_link_libraries(rungs_sm90a PRIVATE CUDA::cudart rungs_warnings)
    if(rungs_spill_flags)
      target_compile_options(rungs_sm90a PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${rungs_spill_flags}>)
    endif()
    set_target_properties(rungs_sm90a PROPERTIES CUDA_ARCHITECTURES "${RUNGS_SM90A_ARCHITECTURES}"
      POSITION_INDEPENDENT_CODE ON CUDA_SEPARABLE_COMPILATION OFF)
    get_target_property(rungs_launcher rungs CUDA_COMPILER_LAUNCHER)
    if(rungs_launcher)
      set_target_properties(rungs_sm90a PROPERTIES CUDA_COMPILER_LAUNCHER "${rungs_launcher}")
    endif()
    target_sources(rungs PRIVATE $<TARGET_OBJECTS:rungs_sm90a>)
    list(LENGTH rungs_sm90a_sources rungs_n)
    message(STATUS "rungs: ${rungs_n} Hopper-only sources for ${RUNGS_SM90A_ARCHITECTURES} only; the others for "
      "${CMAKE_CUDA_ARCHITECTURES}")
  endif()
endif()
