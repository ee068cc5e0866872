# monet_add_plugin(<kind> <name> SOURCES ... [LIBS ...] [OUTPUT_DIR dir] [NO_INSTALL])
#
# Builds plugins/<kind>/<name> as a MODULE library called monet_<kind>_<name>.so into the build tree's plugin
# folder (lib/monet/plugins), which mirrors the install tree so the kernel finds it relative to libmonet.so.
# Only the entry point `monet_plugin_entry` is exported (version script): unloading stays clean and plugins
# cannot clash with each other's symbols.
function(monet_add_plugin kind name)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_DIR" "SOURCES;LIBS" ${ARGN})
  set(target monet_${kind}_${name})
  add_library(${target} MODULE ${P_SOURCES})
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${MONET_PLUGIN_BUILD_DIR})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR}
    INSTALL_RPATH "$ORIGIN/../.."
    BUILD_RPATH "${PROJECT_BINARY_DIR}/lib")
  target_link_libraries(${target} PRIVATE monet::kernel ${P_LIBS})
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/plugin.map" "LINKER:--no-undefined")
  if(NOT P_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/${MONET_PLUGIN_SUBDIR})
    set_property(GLOBAL APPEND PROPERTY MONET_PLUGIN_TARGETS ${target})
  endif()
endfunction()
