#!/usr/bin/env bash
# python_interop.sh — gyro streams are protobuf's delimited format: a stream written by `gyro
# normalize` is read by Python (Debian's python3-protobuf, /usr/bin/python3) record for record,
# and streams written by Python (with and without header) are read by `gyro dump`, whose JSON
# must equal Python's json_format output. The Python modules are generated into TMPDIR.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
root=$(pwd)
PY=/usr/bin/python3
$PY -c 'import google.protobuf, grpc_tools' 2> /dev/null || { echo "python3-protobuf or python3-grpc-tools missing"; exit 77; }
cd "$TMPDIR"
mkdir -p pb
$PY -m grpc_tools.protoc -I "$root/proto" --python_out=pb "$root/proto/gyro.proto" "$root/proto/health.proto" \
  || { echo "FAIL: protoc"; exit 1; }
tool="$root/tests/py/gyro_stream.py"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# gyro writes, Python reads
printf '學生ＡＢＣ\xff\n微波爐 \x1b[1m👍🏽\x1b[0m\n\n  e\xcc\x81  x  \n' | "$GYRO" normalize -q -o docs.pb || bad "normalize failed"
$PY "$tool" pb read docs.pb > py.json || bad "Python could not read the stream of gyro normalize"
"$GYRO" dump docs.pb > gyro.json || bad "gyro dump failed"
$PY "$tool" pb compare py.json gyro.json || bad "Python and gyro dump disagree on docs.pb"
grep -q '"text":"学生ABC�"' py.json || bad "Python sees: $(head -n 1 py.json)"
[ "$(wc -l < py.json)" = 3 ] || bad "Python read $(wc -l < py.json) records, want 3"

# Python writes, gyro reads
for kind in documents embeddings; do
  $PY "$tool" pb write $kind $kind.pb > $kind.want.json || bad "Python could not write $kind"
  "$GYRO" dump $kind.pb > $kind.got.json || bad "gyro dump could not read Python's $kind stream"
  $PY "$tool" pb compare $kind.want.json $kind.got.json || bad "gyro dump of Python's $kind differs"
done
grep -q '"model":"HYPERBOLOID"' embeddings.got.json || bad "enum by name: $(head -c 200 embeddings.got.json)"
grep -q '"count":"12345678901"' embeddings.got.json || bad "uint64 as string: $(head -c 300 embeddings.got.json)"
grep -q '"NaN","Infinity","-Infinity"' embeddings.got.json || bad "NaN/Inf: $(cat embeddings.got.json)"
$PY "$tool" pb write examples-headerless ex.pb > ex.want.json || bad "Python could not write examples"
"$GYRO" dump ex.pb > /dev/null 2> err.txt && bad "a headerless stream was accepted without --type"
"$GYRO" dump --type gyro.v1.Example ex.pb > ex.got.json || bad "gyro dump --type failed: $(cat err.txt)"
$PY "$tool" pb compare ex.want.json ex.got.json || bad "gyro dump of Python's headerless examples differs"
exit $fail
