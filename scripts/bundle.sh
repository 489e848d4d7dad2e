#!/usr/bin/env bash
# Builds the self-contained GPU bundle: libflare (MLIR/LLVM inside), the tools, the tests, the JIT
# example and the example kernels, stripped and xz-compressed into dist/flare-bundle.tar.xz. It runs on
# a machine with the NVIDIA driver and no LLVM: unpack it and run flare-bundle/scripts/gpu-run.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
stage="$root/dist/flare-bundle"
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/lib" "$stage/scripts"
for exe in flarec flare-opt flare-warmup flare-unit-tests flare-gpu-tests softmax_jit attention_jit generation_loop flare-bench-matmul; do
  install -m 755 "$build/bin/$exe" "$stage/bin/"
done
install -m 755 "$build/lib/libflare.so" "$stage/lib/"
strip --strip-unneeded "$stage/lib/libflare.so" "$stage"/bin/*
cp -r "$root/examples" "$stage/examples"
cp -r "$root/bench" "$stage/bench"
install -m 755 "$root/scripts/run-examples.sh" "$root/scripts/gpu-run.sh" "$root/scripts/ptxas-jit.sh" \
  "$root/scripts/compute-sanitize.sh" "$root/scripts/check-variant.sh" "$stage/scripts/"
(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown) > "$stage/COMMIT"
tar -C "$root/dist" -cf - flare-bundle | xz -9 -T0 > "$root/dist/flare-bundle.tar.xz"
ls -l "$root/dist/flare-bundle.tar.xz"
