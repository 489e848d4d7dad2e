#!/usr/bin/env bash
# Fuzzes libflare with libFuzzer in the sanitizer build (scripts/build-sanitize.sh):
#   flare-fuzz-compile    MLIR text through flare::compileToPTX (parse, verify, the whole pipeline)
#   flare-fuzz-metadata   kernel-cache metadata JSON through CompiledModule::fromMetadataJson
#   flare-fuzz-reference  attention modules through the float64 reference interpreter
# Usage: fuzz.sh [seconds per target, default 120] [target...]
#
# Seeds come from the tree on every run: every example, every lit input split at its `// -----` lines
# (comment lines dropped), and for the metadata target the launch metadata flarec writes for the
# examples. Each target keeps what it learns in <build>/fuzz/corpus/<target>/. A crash, sanitizer
# report, timeout (-timeout), memory blow-up (-rss_limit_mb) or leak stops that target; the script
# prints the reproducer and the report and exits non-zero. Reproduce with
#   <build>/bin/<target> <reproducer>
# and minimise with -minimize_crash=1 -runs=10000 -exact_artifact_path=<out>.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
seconds=${1:-120}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(compile metadata reference)
"$root/scripts/build-sanitize.sh" flarec $(printf 'flare-fuzz-%s ' "${targets[@]}")

work="$build/fuzz"
seeds="$work/seeds"
rm -rf "$seeds" && mkdir -p "$seeds/compile" "$seeds/reference" "$seeds/metadata"
symbolizer=/usr/lib/llvm-22/bin/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer

# One seed per file, named by its content (duplicates collapse).
add_seed() { # dir file
  local sum
  sum=$(sha1sum "$2" | cut -c1-40)
  mv "$2" "$1/$sum"
}
chunks="$work/chunks"
rm -rf "$chunks" && mkdir -p "$chunks"
for f in $(cd "$root" && find examples test -name '*.mlir' | sort); do
  # Split at `// -----`, drop full-line comments (RUN and CHECK lines, prose), skip empty chunks.
  awk -v n=0 -v out="$chunks/$(echo "$f" | tr / _)" '
    /^\/\/ -----/ { n++; next }
    /^[ \t]*\/\// { next }
    NF { print > (out "." n) }' "$root/$f"
done
for c in "$chunks"/*; do
  [ -e "$c" ] || continue
  grep -q "attn\.attention" "$c" && cp "$c" "$c.ref" && add_seed "$seeds/reference" "$c.ref"
  add_seed "$seeds/compile" "$c"
done
# Launch metadata of the examples, as the kernel cache stores it.
if [[ " ${targets[*]} " = *" metadata "* ]]; then
  for f in "$root"/examples/tile/*.mlir "$root"/examples/attention/*.mlir; do
    if "$build/bin/flarec" "$f" --emit=meta -o "$chunks/meta.json" 2>/dev/null; then
      add_seed "$seeds/metadata" "$chunks/meta.json"
    fi
  done
fi
echo "fuzz: seeds: $(ls "$seeds/compile" | wc -l) compile, $(ls "$seeds/reference" | wc -l) reference," \
     "$(ls "$seeds/metadata" | wc -l) metadata"

# Dictionaries: MLIR syntax, plus every op, type and attribute name of the seeds.
dict="$work/compile.dict"
{
  cat "$root/tools/flare-fuzz/mlir.dict"
  cat "$seeds/compile"/* | grep -oE '[!#]?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)+' | sort -u | sed 's/.*/"&"/'
} > "$dict"

status=0
for t in "${targets[@]}"; do
  case $t in
    # -timeout (seconds per input) is far above what any seed takes, even on a loaded machine (the
    # slowest, head-dim-256 attention kernels, take under a minute): it reports hangs.
    compile) opts=(-dict="$dict" -timeout=300) ;;
    reference) opts=(-dict="$dict" -timeout=60) ;;
    metadata) opts=(-dict="$root/tools/flare-fuzz/metadata.dict" -timeout=30) ;;
    *) echo "fuzz: unknown target '$t' (compile, metadata, reference)"; exit 2 ;;
  esac
  corpus="$work/corpus/$t" findings="$work/findings/$t"
  mkdir -p "$corpus" "$findings"
  log="$work/$t.log"
  echo "fuzz: flare-fuzz-$t for ${seconds}s (log: $log)"
  # libFuzzer runs every seed before it looks at -max_total_time; the compile target's seeds alone can
  # take longer than a short run. An interrupt (SIGINT, after the time and a grace period) makes it
  # stop with its statistics and exit status 72, which is no finding.
  rc=0
  timeout -s INT --preserve-status $((seconds + seconds / 10 + 5)) \
    "$build/bin/flare-fuzz-$t" "${opts[@]}" -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=32768 \
    -report_slow_units=60 -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" "$seeds/$t" \
    >"$log" 2>&1 || rc=$?
  if [ $rc = 72 ] && grep -q "libFuzzer: run interrupted" "$log"; then
    rc=0
    echo "  interrupted at the time limit (libFuzzer looks at its own only between inputs, after the seeds)"
  fi
  if [ $rc = 0 ]; then
    { grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$log" || true; } | sed 's/^/  /'
    echo "  $(find "$corpus" -type f | wc -l) inputs in the corpus; no findings"
  else
    status=1
    reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | { grep -v /slow-unit- || true; } | tail -1)
    echo "fuzz: flare-fuzz-$t FAILED (exit status $rc)"
    echo "  reproducer: ${reproducer:-none written (see $log)}"
    [ -n "$reproducer" ] && echo "  replay:     $build/bin/flare-fuzz-$t $reproducer"
    # The report: from the first sanitizer, libFuzzer or LLVM error line to the end.
    awk '/^==[0-9]+==|ERROR: libFuzzer|^ALARM|LLVM ERROR|^SUMMARY|runtime error:|terminate called/ { on = 1 } on' "$log" \
      | head -150 | sed 's/^/  /' || true
  fi
done
echo "fuzz: $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
