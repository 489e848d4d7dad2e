# libflare is built from components, one per directory of lib/ (as MLIR's own libraries are): each is an
# object library of its directory's sources, folded into the one shared libflare (lib/CMakeLists.txt),
# so that a component can be built and its dependencies read on their own (`ninja FlareTGPUToNVVM`)
# while executables and users still link libflare alone.
#
#   flare_add_library(NAME src.cpp... [DEPENDS component...] [NO_PCH])
#
# DEPENDS names the components whose headers NAME includes (build order, and the layering a reader
# checks: dialects below transforms below conversions below pipelines below the runtime API). Every
# component but those marked NO_PCH compiles against the one precompiled MLIR header of FlarePCH.

# The precompiled header: MLIR headers are the bulk of every translation unit's compile time; parse
# them once for all components.
add_library(FlarePCH OBJECT ${PROJECT_SOURCE_DIR}/cmake/FlarePCH.cpp)
target_precompile_headers(FlarePCH PRIVATE
  <mlir/IR/Builders.h> <mlir/IR/BuiltinOps.h> <mlir/IR/Dialect.h> <mlir/IR/OpDefinition.h>
  <mlir/IR/OpImplementation.h> <mlir/Pass/Pass.h> <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/SCF/IR/SCF.h> <mlir/Dialect/Func/IR/FuncOps.h> <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h> <mlir/Dialect/LLVMIR/LLVMDialect.h> <mlir/Dialect/LLVMIR/NVVMDialect.h>)

function(flare_add_library name)
  cmake_parse_arguments(ARG "NO_PCH" "" "DEPENDS" ${ARGN})
  add_library(${name} OBJECT ${ARG_UNPARSED_ARGUMENTS})
  add_dependencies(${name} FlareTableGen)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(NOT ARG_NO_PCH)
    target_precompile_headers(${name} REUSE_FROM FlarePCH)
  endif()
  set_property(GLOBAL APPEND PROPERTY FLARE_COMPONENTS ${name})
endfunction()
