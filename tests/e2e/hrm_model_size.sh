#!/usr/bin/env bash
# hrm_model_size.sh — an HRM model file whose header claims a configuration far larger than the
# parameters it stores (here 8 KB claiming dim 4096 and ffn 65536: 1.07e9 parameters) is
# refused, exit 65 naming both counts, before the configuration is allocated: the loader used
# to build (and initialise) the claimed model first, 4.2 GB and 35 s for an 8 KB file. Run under
# a 1.5 GiB address-space limit, which that allocation cannot fit in (not for an ASan build,
# whose shadow memory alone reserves terabytes of address space).
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
"$GYRO" sudoku generate -q --seed 3 -n 8 --clues 45 > p.txt || fail "generate"
"$GYRO" hrm train --dim 8 --heads 2 --head-dim 4 --ffn 16 -N 2 -T 1 -M 2 -b 8 -e 1 -q -o m.hrm p.txt \
  > /dev/null || fail "train"
# header: magic (8), version (4), header size (4), then int32 geometry, n_cells, vocab,
# n_classes, dim (offset 32), n_heads, head_dim, ffn_dim (offset 44), ... (little-endian)
cp m.hrm big.hrm
printf '\000\020\000\000' | dd of=big.hrm bs=1 seek=32 conv=notrunc status=none   # dim 4096
printf '\000\000\001\000' | dd of=big.hrm bs=1 seek=44 conv=notrunc status=none   # ffn 65536
[ "$(wc -c < big.hrm)" = "$(wc -c < m.hrm)" ] || fail "patching the header"
limit=1572864
grep -aq __asan_init "$GYRO" && limit=unlimited
( ulimit -v $limit; "$GYRO" hrm eval -m big.hrm p.txt ) > out.txt 2> err.txt
rc=$?
[ $rc = 65 ] || fail "a file claiming 1.07e9 parameters: exit $rc, want 65: $(cat err.txt)"
grep -q "parameters stored, the configuration has 1074630660" err.txt || fail "message: $(cat err.txt)"
echo "ok   a header claiming a larger configuration than the file holds: exit 65 before allocating"
# the unpatched file still loads under the same limit
( ulimit -v $limit; "$GYRO" hrm eval -m m.hrm p.txt ) > out.txt 2> err.txt || fail "the real model: $(cat err.txt)"
echo "ok   the model itself loads under the same limit"
