# Writes a C++ source defining `const char* const <SYMBOL>` with the text of INPUT (a raw string literal), so a
# file kept in the repository (the report page template) is part of the library: no file to find at run time.
# Usage: cmake -DINPUT=file -DOUTPUT=file.cpp -DSYMBOL=monet::detail::kName -P EmbedText.cmake
file(READ "${INPUT}" text)
set(delimiter "monet_embedded")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter )${delimiter}\"")
endif()
string(REGEX REPLACE "::[^:]+$" "" namespace "${SYMBOL}")
string(REGEX REPLACE "^.*::" "" name "${SYMBOL}")
set(content "// Generated from ${INPUT} by cmake/EmbedText.cmake: do not edit.\nnamespace ${namespace} {\nextern const char* const ${name};\nconst char* const ${name} = R\"${delimiter}(${text})${delimiter}\";\n}\n")
# Rewritten only when it changes: no rebuild of the library otherwise.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
