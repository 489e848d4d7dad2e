# Install rules: libflare, the public headers (those that need no MLIR), flarec, flare-opt and flare-warmup, the CMake
# package (find_package(Flare) -> Flare::flare) and flare.pc for pkg-config. Every path is relative to
# the prefix, so an installed tree works wherever it is moved.
include(CMakePackageConfigHelpers)

# The public API; none of these includes an MLIR or LLVM header (scripts/check-install.sh compiles each
# one alone against the installed tree). The other headers under include/flare (dialects, passes,
# pipelines, the tools' entry points, the layout models of the lowering) are internal to libflare.
set(FLARE_PUBLIC_HEADERS
  flare/Attention.h
  flare/Error.h
  flare/flare_c.h
  flare/Compiler/Compiler.h
  flare/Runtime/Runtime.h
  flare/Runtime/SingleFlight.h
  flare/Reference/Attention.h
  flare/Warmup.h
  flare/Tile/Builder.h)
foreach(header IN LISTS FLARE_PUBLIC_HEADERS)
  get_filename_component(subdir "${header}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/include/${header}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/${subdir}")
endforeach()

# Users compile the headers as C++17; the exported target says so.
target_compile_features(flare PUBLIC cxx_std_17)
install(TARGETS flare EXPORT FlareTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS flarec flare-opt flare-warmup RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

set(FLARE_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Flare")
install(EXPORT FlareTargets NAMESPACE Flare:: DESTINATION "${FLARE_CMAKE_INSTALL_DIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/FlareConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/FlareConfig.cmake"
  INSTALL_DESTINATION "${FLARE_CMAKE_INSTALL_DIR}")
# Before 1.0 a minor version may change the API: only the same major.minor is compatible.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/FlareConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/FlareConfig.cmake" "${PROJECT_BINARY_DIR}/cmake/FlareConfigVersion.cmake"
  DESTINATION "${FLARE_CMAKE_INSTALL_DIR}")

# flare.pc finds the prefix from its own place (${pcfiledir}), like the CMake package.
set(FLARE_PKGCONFIG_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
file(RELATIVE_PATH FLARE_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" FLARE_PC_TO_PREFIX "${FLARE_PC_TO_PREFIX}")
foreach(kind INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(FLARE_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(FLARE_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file("${PROJECT_SOURCE_DIR}/cmake/flare.pc.in" "${PROJECT_BINARY_DIR}/cmake/flare.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/cmake/flare.pc" DESTINATION "${FLARE_PKGCONFIG_INSTALL_DIR}")
