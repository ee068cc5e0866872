# The plugin SDK end to end: installs monet into a scratch prefix, builds examples/out_of_tree_core against the
# installed CMake package (find_package(monet), monet_add_plugin), and runs the example's experiment with the
# installed CLI finding the new plugin through MONET_PLUGIN_PATH (describe) and [plugins] path (the run). The
# per-operator cycles are checked against the hand derivation in examples/out_of_tree_core/README.md.
cmake_policy(SET CMP0007 NEW)  # list(GET) over CSV cells, empty ones included
set(PREFIX ${WORK}/prefix)
set(EXAMPLE_BUILD ${WORK}/example)
file(REMOVE_RECURSE ${WORK})
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
function(expect text what)
  string(FIND "${out}" "${text}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${what}: no '${text}' in\n${out}")
  endif()
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
foreach(f lib/cmake/monet/monetConfig.cmake lib/cmake/monet/monetConfigVersion.cmake lib/cmake/monet/plugin.map
          lib/cmake/monet/plugin_abi_tag.cpp include/monet/plugin/entry.hpp include/monet/plugin/cost_model.hpp
          include/monet/util/version_config.hpp)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()
# The example's source reaches nothing but the installed SDK headers and the standard library.
run("the example's include closure" ${CMAKE_COMMAND} -DCXX=${CXX} -DSYSTEM_DIRS=${SYSTEM_DIRS}
    -DINCLUDE_DIRS=${PREFIX}/include -DWORK=${WORK}/surface -DKIND=cost_model
    -DSOURCE=${SOURCE_DIR}/examples/out_of_tree_core/imc_macro.cpp -P ${CMAKE_CURRENT_LIST_DIR}/../sdk/check_surface.cmake)

set(launcher)
if(CCACHE)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE})
endif()
run("configuring the example" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/out_of_tree_core -B ${EXAMPLE_BUILD}
    -G Ninja -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CXX_COMPILER=${CXX} ${launcher})
run("building the example" ${CMAKE_COMMAND} --build ${EXAMPLE_BUILD} -j2)

set(env ${CMAKE_COMMAND} -E env MONET_PLUGIN_PATH=${EXAMPLE_BUILD}/monet_plugins)
run("monet plugins --describe imc_macro" ${env} ${PREFIX}/bin/monet plugins --describe imc_macro)
expect("imc_macro (cost_model plugin, version 1.0.0)" "describe")
expect("bit planes an input element is applied in" "describe")

# The run finds the plugin through the experiment's [plugins] path instead (given with --set, no MONET_PLUGIN_PATH).
run("the example experiment" ${PREFIX}/bin/monet run ${SOURCE_DIR}/examples/out_of_tree_core/experiment.toml
    --set "plugins.path=[\"${EXAMPLE_BUILD}/monet_plugins\"]" --out ${WORK}/out --log-level warn)
file(STRINGS ${WORK}/out/schedule.csv rows)
list(GET rows 0 header)
string(REPLACE "," ";" header "${header}")
list(FIND header operator col_op)
list(FIND header latency_cycles col_cycles)
list(FIND header mac_energy_pj col_energy)
# Hand derivation (examples/out_of_tree_core/README.md), crossbar 128 x 128, 8 input bits, 16 ADCs:
# fc1: R=300, K=200, V=4 on 3x2 crossbar tiles: 2 x 300 programming + 4 x 3 x 8 x (8 + 5) = 1,848 cycles;
#      28,800 (ADC) + 960 (DAC) + 1,920 (cells) + 240,000 (programming) + 48 (additions) = 271,728 pJ.
# fc2: R=200, K=10, V=4 on 2x1 tiles: 200 programming + 4 x 2 x 8 x 1 = 264 cycles;
#      960 + 320 + 64 + 8,000 + 1.2 = 9,345.2 pJ.
set(expected_fc1 1848 271728)
set(expected_fc2 264 9345.2)
set(seen "")
foreach(row IN LISTS rows)
  string(REPLACE "," ";" cells "${row}")
  list(GET cells ${col_op} op)
  if(op STREQUAL "fc1" OR op STREQUAL "fc2")
    list(GET cells ${col_cycles} cycles)
    list(GET cells ${col_energy} energy)
    list(GET expected_${op} 0 want_cycles)
    list(GET expected_${op} 1 want_energy)
    # Energies are printed with limited digits: compare to 1e-6 relative.
    if(NOT cycles EQUAL want_cycles)
      message(FATAL_ERROR "${op}: ${cycles} cycles, hand derivation ${want_cycles}\n${row}")
    endif()
    execute_process(COMMAND /usr/bin/python3 -c "import sys; a,b=map(float,sys.argv[1:]); sys.exit(abs(a-b) > 1e-6*abs(b))"
                    ${energy} ${want_energy} RESULT_VARIABLE differs)
    if(differs)
      message(FATAL_ERROR "${op}: ${energy} pJ in the array, hand derivation ${want_energy}\n${row}")
    endif()
    list(APPEND seen ${op})
  endif()
endforeach()
if(NOT seen STREQUAL "fc1;fc2")
  message(FATAL_ERROR "schedule.csv has rows for '${seen}', expected fc1 and fc2:\n${rows}")
endif()
file(REMOVE_RECURSE ${WORK})
