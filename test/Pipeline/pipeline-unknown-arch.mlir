// flare-tile-to-ptx{arch=...} must reject an architecture Flare does not support, as flarec --arch does:
// a non-zero exit with a message naming the architecture, and no gpu.binary.
//
// Fixed bug, kept as a regression test: the pipeline builder now checks flare::isSupportedArch and returns failure(), but it is
// registered through PassPipelineRegistration<TileToPTXOptions>, whose builder parameter is a
// std::function<void(OpPassManager &, const Options &)>: the LogicalResult is discarded. With
// arch=sm_99 the builder returns before adding any pass, so flare-opt runs an empty pipeline, prints the
// tile module unchanged and exits 0, without any diagnostic. (Before the check it compiled a gpu.binary
// for `.target sm_99`.) Fixed; kept as a regression test.
//
// RUN: not flare-opt %s '--pass-pipeline=builtin.module(flare-tile-to-ptx{arch=sm_99})' 2>&1 | FileCheck %s
// RUN: not flare-opt %s --flare-tile-to-ptx=arch=sm_99 2>&1 | FileCheck %s
// CHECK: sm_99
// CHECK-NOT: gpu.binary

func.func @noop() attributes {tile.kernel} {
  return
}
