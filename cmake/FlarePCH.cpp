// The translation unit that builds Flare's precompiled MLIR header (cmake/FlareLibrary.cmake); it has
// no code of its own.
