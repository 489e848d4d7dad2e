# Links MLIR/LLVM 22 into libflare from the static archives of the Debian packages.
#
# Debian's LLVM is built with LLVM_LINK_LLVM_DYLIB, so the imported CMake targets of find_package(MLIR)
# drag in libLLVM.so and libMLIR.so; a GPU machine without LLVM cannot load those. libflare instead pulls
# the objects it needs out of the archives (one --start-group, so order does not matter), hides their
# symbols (--exclude-libs) so that --gc-sections can drop what is unused. libstdc++ and libgcc_s stay
# shared: exceptions (flare::Error) cross from libflare into user code, and one unwinder and one C++
# runtime must serve both. The result depends on libc, libm, libstdc++, libgcc_s, libz and libzstd.
file(GLOB FLARE_MLIR_ARCHIVES "${LLVM_LIBRARY_DIR}/libMLIR*.a")
file(GLOB FLARE_LLVM_ARCHIVES "${LLVM_LIBRARY_DIR}/libLLVM*.a")
list(FILTER FLARE_MLIR_ARCHIVES EXCLUDE REGEX "libMLIR(ExecutionEngine|JitRunner|CAPI.*|Python.*|MlirLspServer.*|LspServer.*|TblgenLib|PDLLCodeGen|Pdll.*)\\.a$")
if(NOT FLARE_MLIR_ARCHIVES OR NOT FLARE_LLVM_ARCHIVES)
  message(FATAL_ERROR "no static MLIR/LLVM archives under ${LLVM_LIBRARY_DIR}: install libmlir-22-dev and llvm-22-dev")
endif()

function(flare_link_mlir_archives target)
  get_target_property(kind ${target} TYPE)
  if(kind STREQUAL "STATIC_LIBRARY")
    # The static libflare of the sanitizer build (cmake/FlareSanitize.cmake): each executable links
    # the archives itself, next to the sanitizer runtimes, which must stay visible.
    target_link_libraries(${target} PRIVATE
      -Wl,--start-group ${FLARE_MLIR_ARCHIVES} ${FLARE_LLVM_ARCHIVES} -Wl,--end-group
      -Wl,--gc-sections z zstd dl pthread)
    return()
  endif()
  target_link_libraries(${target} PRIVATE
    -Wl,--start-group ${FLARE_MLIR_ARCHIVES} ${FLARE_LLVM_ARCHIVES} -Wl,--end-group
    -Wl,--exclude-libs,ALL -Wl,--gc-sections -Wl,--no-undefined
    z zstd dl pthread)
endfunction()
