# Installs the build into a scratch prefix and checks that the installed CLI finds its plugins in the install
# tree (not the build tree) and runs the installed quickstart experiment.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
execute_process(COMMAND ${PREFIX}/bin/monet plugins OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed monet plugins failed: ${err}")
endif()
foreach(p "toml 2.0.0" "roofline 1.0.0" "layer_by_layer 1.1.0" "fixed 1.0.0" "search path: ${PREFIX}/")
  string(FIND "${out}" "${p}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "installed monet does not list '${p}':\n${out}")
  endif()
endforeach()
file(GLOB experiment ${PREFIX}/share/monet/experiments/tiny_cnn_dual_core.toml)
execute_process(COMMAND ${PREFIX}/bin/monet run ${experiment} --out ${PREFIX}/out --log-level warn
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(FIND "${out}" "1,414 cycles" pos)
if(NOT rc EQUAL 0 OR pos EQUAL -1)
  message(FATAL_ERROR "installed quickstart failed (${rc}):\n${out}\n${err}")
endif()
# The report page is compiled into the installed library: the installed run writes it, data embedded.
file(READ ${PREFIX}/out/report.html page)
string(FIND "${page}" "\"latency_cycles\":1414" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "installed quickstart wrote no report.html with its data")
endif()
# The Python package: installed for the interpreter it was built for, it loads the installed kernel (not the build
# tree's) and finds the installed plugins.
if(PYTHON)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${PYTHON_DIR}
                          ${PYTHON} -c "import monet; print(monet._monet.__file__); print(monet._monet.plugin_search_path()); print(monet.run('${experiment}').summary['latency_cycles'])"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  foreach(p "${PREFIX}/${PYTHON_DIR}/monet/_monet" "['${PREFIX}/lib/monet/plugins']" "1414")
    string(FIND "${out}" "${p}" pos)
    if(NOT rc EQUAL 0 OR pos EQUAL -1)
      message(FATAL_ERROR "installed Python package (${rc}) does not show '${p}':\n${out}\n${err}")
    endif()
  endforeach()
endif()
file(REMOVE_RECURSE ${PREFIX})
