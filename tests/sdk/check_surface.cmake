# The plugin SDK surface (docs/plugins.md#the-sdk-surface). What a plugin of one kind compiles against — its kind's
# header with monet/plugin/entry.hpp, or a plugin's own source file — may reach monet's SDK headers and the C/C++
# standard library only: no toml++ (or any other third-party header), no kernel-side header (TOML reader, scheduler,
# CN graph, experiment, registry, the all-kinds umbrella), and no search or training types for kinds whose contract
# does not pass them. Runs the compiler's dependency listing (-M) and checks every file it names.
#   cmake -DCXX=<compiler> -DINCLUDE_DIRS="<dir>|<dir>" -DSYSTEM_DIRS="<dir>|..." -DKIND=<kind header name>
#         -DWORK=<scratch dir> [-DSOURCE=<a plugin's .cpp>] -P check_surface.cmake
# KIND names the header (cost_model, fusion_strategy, ...); without SOURCE the probe is "#include <that header>" +
# entry.hpp, with SOURCE the file itself (which should include that kind's header).
cmake_minimum_required(VERSION 3.25)  # the project's policies (IN_LIST)
string(REPLACE "|" ";" INCLUDE_DIRS "${INCLUDE_DIRS}")
string(REPLACE "|" ";" SYSTEM_DIRS "${SYSTEM_DIRS}")

# Forbidden in every kind's closure, with the reason printed on failure.
set(forbidden
  "/toml\\+\\+/|toml++ (the kernel parses TOML, plugins receive validated ParamValues)"
  "/monet/config/toml_reader\\.hpp$|the kernel's TOML reader"
  "/monet/config/params_toml\\.hpp$|parameters read from TOML (kernel-side)"
  "/monet/schedule/schedule\\.hpp$|the scheduler (ScheduleInputs/ScheduleResult)"
  "/monet/schedule/cn_graph\\.hpp$|the CN graph the scheduler runs on"
  "/monet/experiment/|the experiment (kernel-side)"
  "/monet/report/|reports (kernel-side)"
  "/monet/plugin/interfaces\\.hpp$|the all-kinds umbrella (kernel and old plugins only)"
  "/monet/plugin/abi_layout\\.hpp$|the ABI layout table of every kind (cmake/plugin_abi_tag.cpp only)"
  "/monet/plugin/registry\\.hpp$|the plugin loader (kernel-side)")
if(NOT KIND STREQUAL "search_algorithm")
  list(APPEND forbidden "/monet/search/|search types (only search plugins see the design space)")
endif()
if(NOT KIND MATCHES "^(backward_generator|optimizer_model)$")
  list(APPEND forbidden "/monet/training/|training-graph types (only backward generators and optimizer models)")
endif()
if(NOT KIND STREQUAL "fusion_strategy")
  list(APPEND forbidden "/monet/schedule/|computation nodes (only fusion strategies produce them)")
endif()
# The C and C++ standard libraries' own folders under a system include directory.
set(std_dirs bits sys gnu asm asm-generic linux ext debug pstl backward tr1 tr2 c++ x86_64-linux-gnu)

file(MAKE_DIRECTORY ${WORK})
if(SOURCE)
  set(probe ${SOURCE})
else()
  set(probe ${WORK}/probe_${KIND}.cpp)
  file(WRITE ${probe} "#include \"monet/plugin/${KIND}.hpp\"\n#include \"monet/plugin/entry.hpp\"\n")
endif()
set(flags -std=c++20 -M -x c++)
foreach(d ${INCLUDE_DIRS})
  list(APPEND flags -I${d})
endforeach()
execute_process(COMMAND ${CXX} ${flags} ${probe} RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CXX} -M ${probe} failed (${rc}):\n${err}")
endif()
string(REPLACE "\\\n" " " deps "${deps}")
string(REGEX REPLACE "^[^:]*: " "" deps "${deps}")
separate_arguments(deps UNIX_COMMAND "${deps}")

set(real_includes "")
foreach(d ${INCLUDE_DIRS})
  file(REAL_PATH ${d} r)
  list(APPEND real_includes ${r})
endforeach()
set(real_system "")
foreach(d ${SYSTEM_DIRS})
  if(EXISTS ${d})
    file(REAL_PATH ${d} r)
    list(APPEND real_system ${r})
  endif()
endforeach()
file(REAL_PATH ${probe} real_probe)

set(problems "")
set(monet_headers 0)
list(LENGTH deps total)
foreach(dep ${deps})
  file(REAL_PATH ${dep} path)
  if(path STREQUAL real_probe)
    continue()
  endif()
  set(named FALSE)
  foreach(rule ${forbidden})
    string(REPLACE "|" ";" rule "${rule}")
    list(GET rule 0 pattern)
    list(GET rule 1 why)
    if(path MATCHES "${pattern}" AND NOT named)
      string(APPEND problems "\n  ${path}: ${why}")
      set(named TRUE)  # one reason per file
    endif()
  endforeach()
  # Where it comes from: an SDK include directory (monet/...), else a system one (the standard libraries only).
  set(placed FALSE)
  foreach(d ${real_includes})
    string(FIND "${path}" "${d}/monet/" at)
    if(at EQUAL 0)
      set(placed TRUE)
      math(EXPR monet_headers "${monet_headers} + 1")
      break()
    endif()
  endforeach()
  if(NOT placed)
    set(best "")
    foreach(d ${real_system})
      string(FIND "${path}" "${d}/" at)
      string(LENGTH "${d}" n)
      string(LENGTH "${best}" nb)
      if(at EQUAL 0 AND n GREATER nb)
        set(best ${d})
      endif()
    endforeach()
    if(best)
      file(RELATIVE_PATH rel ${best} ${path})
      if(NOT rel MATCHES "/")
        set(placed TRUE)  # a C library header (stdio.h, features.h) or a standard C++ header (vector)
      else()
        string(REGEX MATCH "^[^/]+" top "${rel}")
        if(top IN_LIST std_dirs)
          set(placed TRUE)
        endif()
      endif()
    endif()
  endif()
  if(NOT placed AND NOT named)
    string(APPEND problems "\n  ${path}: neither a monet SDK header nor a C/C++ standard library header")
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "the SDK surface of '${KIND}' (${probe}) reaches what a plugin must not include:${problems}")
endif()
message(STATUS "${KIND}: ${total} files, ${monet_headers} of them monet headers, all SDK or standard library")
