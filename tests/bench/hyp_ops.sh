#!/usr/bin/env bash
# hyp_ops.sh — ns per call of the hyperbolic math core (models/hyp/) at d = 100, float32 and
# float64, against a naive scalar loop of the same formula.
#   tests/bench/hyp_ops.sh [reps] [iters]
# Builds tests/bench/hyp_ops_bench.c with the project's compiler flags (-O2 -march=native, no
# -ffast-math) into a temporary directory, runs it niced, and prints one table (medians).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-std=c11 -Wall -Wextra -O2 ${ARCH_FLAGS:--march=native} -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I$here"
srcs=("$here"/models/hyp/*.c "$here"/models/core/rng.c "$here"/tests/bench/hyp_ops_bench.c)
"$cc" $flags -o "$tmp/hyp_ops_bench" "${srcs[@]}" -lm
echo "compiler: $("$cc" --version | head -n 1); flags: $flags"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
nice "$tmp/hyp_ops_bench" "${1:-7}" "${2:-200000}"
