#!/usr/bin/env bash
# python_train.sh — training over gRPC from Python: the gyro package (installed in a venv over
# Debian's python3-grpcio, no index) calls Client.train_classifier and Client.train_embeddings
# on `gyro serve --model OLD --train-dir DIR` (tests/py/train_suite.py): progress messages, the
# new model's version in Classify, a second training meanwhile ResourceExhausted, closing the
# iterator cancels (nothing written, old model still served, a new training accepted at once),
# paths outside DIR refused, empty and malformed data InvalidArgument; then the README's Python
# example of training over gRPC, as printed there.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
. tests/py/python_lib.bash
. tests/py/grpc_lib.bash
. tests/e2e/lib/intents.sh
py_require
py_package_env "$TMPDIR/venv"

D="$TMPDIR/train"
mkdir -p "$D"
gen_intents > "$TMPDIR/data.tsv"
"$GYRO" classify train -q --dim 16 --epochs 2 -o "$TMPDIR/old.model" "$TMPDIR/data.tsv"
for _ in $(seq 1 1250); do cut -f1 "$TMPDIR/data.tsv"; done | paste -d' ' - - - - - - - - > "$D/big.txt"

start_server py --model "$TMPDIR/old.model" --train-dir "$D" --train-max-epochs 100 --train-max-dim 64
"$PYV" tests/py/train_suite.py "$ADDR" "$D" "$TMPDIR/data.tsv" big.txt \
  || { echo "--- server log"; cat "$SLOG"; exit 1; }

awk '/^### Training over gRPC/ { s = 1 } s && /^```python/ { p = 1; next } p && /^```/ { exit } p' README.md \
  > "$TMPDIR/readme_train.py"
grep -q 'train_classifier' "$TMPDIR/readme_train.py" || { echo "FAIL: no Python training example in the README"; exit 1; }
sed -i "s/127.0.0.1:50051/$ADDR/" "$TMPDIR/readme_train.py"
"$PYV" "$TMPDIR/readme_train.py" > "$TMPDIR/readme_train.out" || { echo "FAIL: the README's example"; cat "$SLOG"; exit 1; }
cat "$TMPDIR/readme_train.out"
grep -q "^table $(cd "$D" && pwd -P)/poems.hyp$" "$TMPDIR/readme_train.out" && tail -n 1 "$TMPDIR/readme_train.out" | grep -q ' True$' \
  && grep -q '^epoch [1-5] fraction ' "$TMPDIR/readme_train.out" \
  || { echo "FAIL: the README's training example printed something else"; exit 1; }
echo "ok   the README's Python training example runs: progress, the table, the served classifier"
stop_server
