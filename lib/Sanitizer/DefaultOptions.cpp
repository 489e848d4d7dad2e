//===- DefaultOptions.cpp - Sanitizer defaults of the sanitizer build -----===//
//
// Linked into every executable of the FLARE_SANITIZE build (cmake/FlareSanitize.cmake); the
// ASAN_OPTIONS and UBSAN_OPTIONS environment variables still override these.
//
// allow_user_poisoning=0: LLVM's allocators (BumpPtrAllocator, ArrayRecycler) poison and unpoison
// their slabs by hand when the code is compiled with ASan. Flare's instrumented copies of those inline
// functions and the uninstrumented ones in the MLIR/LLVM archives would disagree (a slab poisoned by
// one, handed out by the other), so every compilation would report a use-after-poison that is not
// there. Heap, stack and global checks are unaffected.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

extern "C" const char *__ubsan_default_options() { return "print_stacktrace=1"; }
