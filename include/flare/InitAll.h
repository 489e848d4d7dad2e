//===- InitAll.h - Register Flare's dialects and passes ---------*- C++ -*-===//
//
// What a tool built on Flare (flare-opt, flarec, a user's own driver) registers: Flare's dialects
// with the upstream ones a Flare module may contain, and every pass of Flare's pipeline, each
// runnable alone by its flag.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_INITALL_H
#define FLARE_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace flare {

/// Registers Flare's dialects (attn, tile, tgpu), the upstream dialects a Flare module may contain,
/// and the external models and translations the pipeline needs.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers Flare's passes, the upstream passes the pipeline uses and the `flare-tile-to-ptx`
/// pipeline. Idempotent.
void registerAllPasses();

} // namespace flare

#endif // FLARE_INITALL_H
