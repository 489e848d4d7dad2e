# FLARE_SANITIZE: Flare's own code built with AddressSanitizer and UndefinedBehaviorSanitizer, and the
# libFuzzer targets of tools/flare-fuzz (scripts/sanitize.sh and scripts/fuzz.sh use it).
#
# 1. clang only: libFuzzer and the sanitizer runtimes come with clang (Debian: clang-22 and
#    libclang-rt-22-dev).
# 2. Every report is fatal (-fno-sanitize-recover=all), so a test or a fuzz run fails on the first one.
# 3. UBSan's vptr check is off: LLVM and MLIR are built without RTTI, so every MLIR object would look
#    like one "with an invalid vptr" to it. The MLIR/LLVM archives themselves are not instrumented.
# 4. _GLIBCXX_ASSERTIONS adds bounds checks to the standard containers Flare uses (an index past the
#    size but inside the capacity of a std::vector is invisible to ASan); it does not change layouts.
# 5. Own code also carries libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link); outside a
#    fuzz target the sanitizer runtime's default callbacks ignore it.
# 6. libflare becomes a static library (FLARE_LIBRARY_KIND): the sanitizer runtimes live in each
#    executable, which the shared library's -Wl,--no-undefined link cannot see. The normal build is
#    unchanged.
# 7. allow_user_poisoning=0 by default (lib/Sanitizer/DefaultOptions.cpp says why).
option(FLARE_SANITIZE "Build Flare's own code with ASan+UBSan and the libFuzzer targets (clang only)" OFF)

set(FLARE_LIBRARY_KIND SHARED)
if(NOT FLARE_SANITIZE)
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "FLARE_SANITIZE needs clang for C and C++: configure with "
                      "-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22")
endif()

set(FLARE_LIBRARY_KIND STATIC)
set(FLARE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all)
add_compile_options(${FLARE_SANITIZER_FLAGS} -fsanitize=fuzzer-no-link -fno-omit-frame-pointer
                    -gline-tables-only -D_GLIBCXX_ASSERTIONS)
add_link_options(${FLARE_SANITIZER_FLAGS})
# Sanitizer defaults (lib/Sanitizer/DefaultOptions.cpp) in every executable created from here on.
add_library(FlareSanitizerDefaults OBJECT ${PROJECT_SOURCE_DIR}/lib/Sanitizer/DefaultOptions.cpp)
link_libraries(FlareSanitizerDefaults)

# Fuzz executables: libFuzzer's main and its coverage callbacks.
function(flare_add_fuzzer name)
  add_executable(${name} ${ARGN})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE flare)
endfunction()
