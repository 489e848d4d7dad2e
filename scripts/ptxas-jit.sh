#!/usr/bin/env bash
# Runs ptxas the way the runtime has the driver compile a PTX file: relocatable (-c), as the driver's
# linker does, unless the PTX moves register budgets with setmaxnreg (a producer warpgroup), which
# the runtime loads as a whole program (relocatable code ignores setmaxnreg).
# Usage: ptxas-jit.sh PTXAS [ptxas arguments, one of them the .ptx file]
set -euo pipefail
ptxas=$1
shift
mode=-c
for arg in "$@"; do
  if [[ $arg == *.ptx ]] && grep -q setmaxnreg "$arg"; then
    mode=
  fi
done
exec "$ptxas" $mode "$@"
