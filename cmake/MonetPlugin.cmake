# monet_add_plugin(<kind> <name> SOURCES ... [LIBS ...] [OUTPUT_DIR dir] [NO_INSTALL])
#
# Builds a plugin as a MODULE library called monet_<kind>_<name>.so. Only the entry point `monet_plugin_entry` is
# exported (version script): unloading stays clean and plugins cannot clash with each other's symbols. The library
# also gets MONET_PLUGIN_ABI_SOURCE, which defines its ABI tag.
#
# In monet's tree (plugins/<kind>/<name>/) the library goes to the build tree's plugin folder (lib/monet/plugins),
# which mirrors the install tree so the kernel finds it relative to libmonet.so. Out of tree (after
# find_package(monet), which includes this file) it goes to <build>/monet_plugins — point MONET_PLUGIN_PATH there —
# and installs to <prefix>/lib/monet/plugins of the project.
set(_MONET_PLUGIN_MAP "${CMAKE_CURRENT_LIST_DIR}/plugin.map")
# The source file that defines a plugin library's ABI tag (monet/plugin/abi.hpp): it sees every type crossing the
# boundary, so the plugin's own sources need only their kind's header. A library built without monet_add_plugin
# adds it to its sources (otherwise: undefined reference to monet::detail::plugin_abi_tag).
set(MONET_PLUGIN_ABI_SOURCE "${CMAKE_CURRENT_LIST_DIR}/plugin_abi_tag.cpp")

function(monet_add_plugin kind name)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_DIR" "SOURCES;LIBS" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "monet_add_plugin(${kind} ${name}): no SOURCES")
  endif()
  set(target monet_${kind}_${name})
  add_library(${target} MODULE ${P_SOURCES} ${MONET_PLUGIN_ABI_SOURCE})
  if(TARGET monet_kernel)  # inside monet's own build
    set(kernel monet::kernel)
    set(default_dir ${MONET_PLUGIN_BUILD_DIR})
  else()
    set(kernel monet::monet)
    set(default_dir ${CMAKE_BINARY_DIR}/monet_plugins)
  endif()
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${default_dir})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR}
    INSTALL_RPATH "$ORIGIN/../..")
  if(TARGET monet_kernel)
    set_target_properties(${target} PROPERTIES BUILD_RPATH "${PROJECT_BINARY_DIR}/lib")
  endif()
  target_link_libraries(${target} PRIVATE ${kernel} ${P_LIBS})
  target_link_options(${target} PRIVATE "LINKER:--version-script=${_MONET_PLUGIN_MAP}")
  if(NOT MONET_FUZZ)  # clang's static ASan runtime (fuzz build) leaves its symbols to the executable
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  if(NOT P_NO_INSTALL)
    if(NOT CMAKE_INSTALL_LIBDIR)
      include(GNUInstallDirs)
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/monet/plugins)
    set_property(GLOBAL APPEND PROPERTY MONET_PLUGIN_TARGETS ${target})
  endif()
endfunction()
