#!/usr/bin/env bash
# python_interop.sh — gyro streams are protobuf's delimited format: a stream written by `gyro
# normalize` is read by the gyro Python package (pipeline/python, installed into a venv over
# Debian's python3-protobuf) record for record, and streams written by the package (with and
# without header) are read by `gyro dump`, whose JSON must equal the package's to_json output.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
. tests/py/python_lib.bash
py_require
py_package_env "$TMPDIR/venv"
tool="$PWD/tests/py/gyro_stream.py"
cd "$TMPDIR"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# gyro writes, Python reads
printf '學生ＡＢＣ\xff\n微波爐 \x1b[1m👍🏽\x1b[0m\n\n  e\xcc\x81  x  \n' | "$GYRO" normalize -q -o docs.pb || bad "normalize failed"
$PYV "$tool" read docs.pb > py.json || bad "Python could not read the stream of gyro normalize"
"$GYRO" dump docs.pb > gyro.json || bad "gyro dump failed"
$PYV "$tool" compare py.json gyro.json || bad "Python and gyro dump disagree on docs.pb"
grep -q '"text":"学生ABC�"' py.json || bad "Python sees: $(head -n 1 py.json)"
[ "$(wc -l < py.json)" = 3 ] || bad "Python read $(wc -l < py.json) records, want 3"

# Python writes, gyro reads
for kind in documents embeddings; do
  $PYV "$tool" write $kind $kind.pb > $kind.want.json || bad "Python could not write $kind"
  "$GYRO" dump $kind.pb > $kind.got.json || bad "gyro dump could not read Python's $kind stream"
  $PYV "$tool" compare $kind.want.json $kind.got.json || bad "gyro dump of Python's $kind differs"
done
grep -q '"model":"HYPERBOLOID"' embeddings.got.json || bad "enum by name: $(head -c 200 embeddings.got.json)"
grep -q '"count":"12345678901"' embeddings.got.json || bad "uint64 as string: $(head -c 300 embeddings.got.json)"
grep -q '"NaN","Infinity","-Infinity"' embeddings.got.json || bad "NaN/Inf: $(cat embeddings.got.json)"
$PYV "$tool" write examples-headerless ex.pb > ex.want.json || bad "Python could not write examples"
"$GYRO" dump ex.pb > /dev/null 2> err.txt && bad "a headerless stream was accepted without --type"
"$GYRO" dump --type gyro.v1.Example ex.pb > ex.got.json || bad "gyro dump --type failed: $(cat err.txt)"
$PYV "$tool" compare ex.want.json ex.got.json || bad "gyro dump of Python's headerless examples differs"
$PYV "$tool" error ex.pb > ex.err || bad "Python read a headerless stream without being given its type"
grep -q 'not a gyro stream' ex.err || bad "headerless stream: $(cat ex.err)"
$PYV "$tool" read ex.pb gyro.v1.Example > ex.py.json || bad "Python could not read a headerless stream with its type"
$PYV "$tool" compare ex.want.json ex.py.json || bad "Python's reading of its headerless examples differs"
exit $fail
