# shellcheck shell=bash disable=SC2034  # sets variables for the script that sources it
# Sourced by scripts/check-install.sh and scripts/check-readme.sh: installs the build into a temporary
# prefix as a user would, then moves it, so that nothing may depend on where it was installed.
#   install_flare <build dir> <scratch dir>
# builds what is installed, installs it, and sets `prefix` (<scratch dir>/prefix), `pcdir` (the
# directory of flare.pc) and `libdir` (libflare's). Returns non-zero, saying why, on failure.
install_flare() {
  local build=$1 scratch=$2 out
  out=$(cmake --build "$build" --target flare flarec flare-opt flare-warmup 2>&1) ||
    { echo "$out" >&2; echo "install: building $build failed" >&2; return 1; }
  out=$(cmake --install "$build" --prefix "$scratch/installed" 2>&1) ||
    { echo "$out" >&2; echo "install: cmake --install failed" >&2; return 1; }
  mv "$scratch/installed" "$scratch/prefix" || return 1
  prefix=$scratch/prefix
  pcdir=$(dirname "$(find "$prefix" -name flare.pc -path '*/pkgconfig/*' | head -1)")
  [ -f "$pcdir/flare.pc" ] || { echo "install: no flare.pc under $prefix" >&2; return 1; }
  libdir=$(dirname "$pcdir")
}
