#!/usr/bin/env bash
# Checks the installed Flare as a user sees it: installs the build into a temporary prefix (then moves it,
# so nothing may depend on where it was installed), compiles each installed header alone, runs the
# installed flarec, and builds and runs examples/consumer twice: with CMake (find_package(Flare)) and
# with plain g++ and pkg-config.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_BUILD_DIR:-$root/build}
cxx=${CXX:-g++}
fail() { echo "check-install: FAILED: $*" >&2; exit 1; }
# Runs a command quietly, showing its output only when it fails.
quiet() { local out; out=$("$@" 2>&1) || { echo "$out" >&2; return 1; }; }
[ -f "$build/CMakeCache.txt" ] || fail "no build in $build (run scripts/build.sh)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/flare-check-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$root/scripts/install-prefix.sh"
install_flare "$build" "$tmp" || fail "installing $build"

# What a user gets: the public headers, libflare, the tools, the CMake package and flare.pc.
for f in "$libdir/libflare.so" "$prefix/bin/flarec" "$prefix/bin/flare-opt" "$prefix/bin/flare-warmup" \
         "$libdir/cmake/Flare/FlareConfig.cmake" "$libdir/cmake/Flare/FlareConfigVersion.cmake" \
         "$libdir/cmake/Flare/FlareTargets.cmake"; do
  [ -f "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
echo "check-install: installed $(cd "$prefix" && find . -type f | sort | sed 's|^\./||' | paste -sd' ' -)"
if grep -rlF -e "$root" -e "$build" "$prefix" --include='*.cmake' --include='*.pc' >/dev/null; then
  fail "an installed package file names the source or build tree"
fi

# Every installed header compiles on its own, with the prefix as the only include path (no MLIR).
headers=$(cd "$prefix/include" && find flare -name '*.h' | sort)
[ -n "$headers" ] || fail "no headers installed"
for h in $headers; do
  if grep -qE '#include [<"](mlir|llvm)/' "$prefix/include/$h"; then fail "$h includes MLIR or LLVM"; fi
  echo "#include <$h>" | "$cxx" -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" -x c++ - ||
    fail "$h does not compile alone"
done
echo "#include <flare/flare_c.h>" | "${CC:-gcc}" -std=c11 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" -x c - ||
  fail "flare/flare_c.h does not compile as C"
echo "check-install: $(wc -w <<<"$headers") headers compile alone"

# The installed tools find the installed libflare through their RPATH (nothing else points to it).
runpath=$(readelf -d "$prefix/bin/flarec" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
[[ $runpath == '$ORIGIN/'* ]] || fail "flarec's RPATH is '$runpath', not relative to \$ORIGIN"
"$prefix/bin/flarec" "$root/examples/tile/vector_add.mlir" --emit=ptx --arch=sm_90a -o "$tmp/vector_add.ptx"
grep -q ".entry vector_add" "$tmp/vector_add.ptx" || fail "installed flarec wrote no vector_add kernel"
quiet "$prefix/bin/flare-opt" --tgpu-assign-layouts "$root/examples/tile/softmax.mlir" || fail "installed flare-opt"
echo "check-install: installed flarec and flare-opt run (RPATH $runpath)"

# A CMake project: find_package(Flare) through CMAKE_PREFIX_PATH, linking Flare::flare.
quiet cmake -S "$root/examples/consumer" -B "$tmp/consumer-cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" ||
  fail "configuring examples/consumer"
found=$(sed -n 's/^Flare_DIR:PATH=//p' "$tmp/consumer-cmake/CMakeCache.txt")
[ "$found" = "$libdir/cmake/Flare" ] || fail "find_package(Flare) found '$found', not the installed package"
quiet cmake --build "$tmp/consumer-cmake" || fail "building examples/consumer with CMake"
echo "check-install: examples/consumer built with CMake; running it:"
"$tmp/consumer-cmake/flare-consumer"

# A plain compiler with pkg-config.
export PKG_CONFIG_PATH="$pcdir"
"$cxx" -std=c++17 -Wall -Wextra -Werror "$root/examples/consumer/main.cpp" -o "$tmp/flare-consumer-pc" \
  $(pkg-config --cflags --libs flare) -Wl,-rpath,"$(pkg-config --variable=libdir flare)"
echo "check-install: examples/consumer built with $cxx \$(pkg-config --cflags --libs flare); running it:"
"$tmp/flare-consumer-pc"
echo "check-install: ok"
