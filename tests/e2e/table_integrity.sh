#!/usr/bin/env bash
# table_integrity.sh — `gyro neighbors` and `gyro convert` refuse, with exit 65 and a message
# naming the row, a Poincaré table whose row lies on or outside the ball (they used to accept
# it), and any table with a flipped bit in a coordinate (the record checksum; it used to load).
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
PY=/usr/bin/python3
"$PY" tests/py/need.py google.protobuf grpc_tools.protoc || exit $?
root=$PWD
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
"$PY" -m grpc_tools.protoc -I"$root/proto" --python_out=. "$root/proto/gyro.proto" || fail "protoc"
# a Poincaré table written by another program (no checksum): row 2 has |x| = 1.25
"$PY" - <<'PY' || fail "writing the table"
import gyro_pb2
from google.protobuf.internal.encoder import _VarintBytes
h = gyro_pb2.StreamHeader(magic="gyro", version=1, message_type="gyro.v1.EmbeddingTable", producer="test")
t = gyro_pb2.EmbeddingTable(model=gyro_pb2.POINCARE, curvature=1.0, dim=2)
for tok, v in (("山", [0.1, 0.2]), ("水", [0.3, -0.1]), ("火", [1.0, 0.75])):
    t.entries.add(token=tok, count=1, vector=v)
with open("out.poi", "wb") as f:
    for m in (h, t):
        b = m.SerializeToString()
        f.write(_VarintBytes(len(b)) + b)
PY
for cmd in "neighbors -t out.poi -k 1 山" "convert --to hyperboloid -o x.hyp out.poi"; do
  "$GYRO" $cmd > /dev/null 2> err.txt; rc=$?
  [ $rc = 65 ] || { cat err.txt; fail "$cmd: exit $rc, want 65"; }
  grep -q "row 2 ('火') is outside the Poincaré ball" err.txt || { cat err.txt; fail "$cmd: message"; }
done
[ ! -e x.hyp ] || fail "convert wrote an output"

# a table written by gyro, one mantissa bit of one coordinate flipped
printf '山水花鸟风月山水花鸟\n风月山水花鸟风月\n' > c.txt
"$GYRO" char2vec train -q --dim 3 --epochs 1 --min-count 1 -o c.hyp c.txt || fail "char2vec"
"$GYRO" neighbors -t c.hyp -k 1 山 > /dev/null || fail "the good table does not load"
"$PY" - <<'PY' || fail "flipping a bit"
import struct, gyro_pb2
from google.protobuf.internal.decoder import _DecodeVarint
data = bytearray(open("c.hyp", "rb").read())
# find the first coordinate of the first entry: decode header and record, locate its float bytes
n, p = _DecodeVarint(data, 0); p += n
n, p = _DecodeVarint(data, p)
t = gyro_pb2.EmbeddingTable.FromString(bytes(data[p:p + n]))
want = struct.pack("<f", t.entries[0].vector[1])
i = data.find(want, p)
assert i > 0
data[i] ^= 1
open("c.hyp", "wb").write(data)
PY
"$GYRO" neighbors -t c.hyp -k 1 山 > /dev/null 2> err.txt; rc=$?
[ $rc = 65 ] || { cat err.txt; fail "bit flip: exit $rc, want 65"; }
grep -q "checksum mismatch" err.txt || { cat err.txt; fail "bit flip: message"; }
echo ok
