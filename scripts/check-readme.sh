#!/usr/bin/env bash
# Checks that README.md's code compiles as written: extracts every ```cpp and ```c block, and compiles
# and links each against an installed Flare (installed into a temporary prefix, as
# scripts/check-install.sh does; or the prefix given as the argument) with g++ and clang++ (C: gcc and
# clang), -Wall -Wextra -Werror. A block with a main() links into a program, any other into a shared
# library that must leave no symbol undefined. The snippets are not run: they need a GPU. A failing
# block is named by the line of its opening fence, and the compiler's messages by README.md's lines.
#   check-readme.sh [installed prefix]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_BUILD_DIR:-$root/build}
readme=$root/README.md
fail() { echo "check-readme: FAILED: $*" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/flare-check-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ $# -ge 1 ]; then
  prefix=$(cd "$1" && pwd)
  pcdir=$(dirname "$(find "$prefix" -name flare.pc -path '*/pkgconfig/*' | head -1)")
  [ -f "$pcdir/flare.pc" ] || fail "no flare.pc under $prefix"
else
  [ -f "$build/CMakeCache.txt" ] || fail "no build in $build (run scripts/build.sh)"
  . "$root/scripts/install-prefix.sh"
  install_flare "$build" "$tmp" || fail "installing $build"
fi
export PKG_CONFIG_PATH="$pcdir"
flags=$(pkg-config --cflags --libs flare) || fail "pkg-config finds no flare in $pcdir"
rpath=-Wl,-rpath,$(pkg-config --variable=libdir flare)

# One file per block, <fence line>.<cpp|c>; the list of them, in README order, on stdout.
blocks=$(awk -v dir="$tmp" '
  !open && /^```(cpp|c)[ \t]*$/ { lang = $0; sub(/^```/, "", lang); sub(/[ \t]+$/, "", lang)
                                  file = NR "." lang; printf "" > (dir "/" file); open = 1; next }
  open && /^```[ \t]*$/ { close(dir "/" file); print file; open = 0; next }
  open { print > (dir "/" file) }
  END { if (open) { print "README.md:" NR ": a code block is not closed" > "/dev/stderr"; exit 1 } }
' "$readme") || fail "reading $readme"
[ -n "$blocks" ] || fail "no \`\`\`cpp or \`\`\`c block in README.md"

status=0 lines=
for block in $blocks; do
  line=${block%%.*} lang=${block#*.}
  lines+=" $line"
  case $lang in
    cpp) compilers="g++ clang++" std=-std=c++17 ;;
    c) compilers="gcc clang" std=-std=c11 ;;
  esac
  if grep -qE '^[[:space:]]*int[[:space:]]+main[[:space:]]*\(' "$tmp/$block"; then
    link=(-o "$tmp/$block.out")
  else
    # shellcheck disable=SC2054  # -Wl,--no-undefined is one argument
    link=(-shared -fPIC -Wl,--no-undefined -o "$tmp/$block.so")
  fi
  for cc in $compilers; do
    command -v "$cc" >/dev/null || fail "$cc not found (scripts/setup.sh installs it)"
    # shellcheck disable=SC2086  # $flags holds several words
    if ! out=$("$cc" $std -Wall -Wextra -Werror "$tmp/$block" "${link[@]}" $flags "$rpath" 2>&1); then
      echo "check-readme: FAILED: the \`\`\`$lang block at README.md:$line with $cc:" >&2
      # The compiler's <block file>:<line> becomes the line in README.md.
      perl -pe "s{\\Q$tmp/$block\\E:(\\d+)}{'README.md:' . (\$1 + $line)}ge; s{\\Q$tmp/$block\\E}{README.md}g" \
        <<<"$out" >&2
      status=1
    fi
  done
done
[ $status = 0 ] || exit 1
echo "check-readme: $(wc -w <<<"$blocks") blocks of README.md (at lines$lines) compile and link with g++ and" \
  "clang++ (C: gcc and clang)"
