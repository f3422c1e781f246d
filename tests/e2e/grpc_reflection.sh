#!/usr/bin/env bash
# grpc_reflection.sh — gRPC server reflection (grpc.reflection.v1alpha and v1) from Debian's
# python3-grpcio: a client that knows only the server's address lists the services, loads their
# descriptors from the server into an empty protobuf pool and classifies an utterance with
# message classes built from them (tests/py/reflection_client.py); symbol and file lookups; errors
# as ErrorResponse messages on a stream that goes on. The served descriptor set is the one
# compiled into the binary: the test runs from a directory without proto/.
set -eu
. tests/py/grpc_lib.bash
grpc_setup
"$GYRO" classify --help >/dev/null 2>&1 || { echo "gyro classify not built"; exit 77; }
# the client's only stubs: the reflection protocol itself
mkdir -p "$TMPDIR/refl"
"$PY" -m grpc_tools.protoc -Iproto --python_out="$TMPDIR/refl" --grpc_python_out="$TMPDIR/refl" proto/reflection.proto \
  proto/reflection_v1.proto

"$PY" tests/py/make_examples.py "$GEN" toy "$TMPDIR/toy.pb" "$TMPDIR/toy.txt"
"$GYRO" classify train --dim 16 --layers 1 --heads 2 --epochs 15 --seed 1 --quiet -o "$TMPDIR/a.model" "$TMPDIR/toy.pb"
here=$PWD
cd "$TMPDIR"
start_server refl --model "$TMPDIR/a.model"
"$PY" "$here/tests/py/reflection_client.py" "$TMPDIR/refl" "$ADDR" "$(head -n 1 "$TMPDIR/toy.txt")" v1alpha
"$PY" "$here/tests/py/reflection_client.py" "$TMPDIR/refl" "$ADDR" "$(head -n 2 "$TMPDIR/toy.txt" | tail -n 1)" v1
stop_server
