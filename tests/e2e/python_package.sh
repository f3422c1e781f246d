#!/usr/bin/env bash
# python_package.sh — the gyro Python package (pipeline/python) as a user gets it, with Debian's
# python3 and no package index: installed by the README's venv recipe (any attempt to reach an
# index fails the test), by `pip install --user`, and by `make install` (into a DESTDIR, for
# PREFIX /usr/local and /opt/gyro); nothing generated lands in the source tree. Then: the stream
# API offline (tests/py/package_suite.py streams); streams of `gyro normalize` and `gyro import`
# read by the package and equal to `gyro dump`, streams written by the package read by gyro
# (dump, classify train), the README's streams example; corrupt streams refused by Python with
# the C reader's very message;
# a real `gyro serve` (a classifier trained on a stream the package wrote, a character table, a
# root-finding policy) called through every Client method, the README's five-line example, TLS
# and mutual TLS.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
. tests/py/python_lib.bash
. tests/py/grpc_lib.bash
py_require
root=$PWD
T=$TMPDIR
tool="$root/tests/py/gyro_stream.py"
suite_py="$root/tests/py/package_suite.py"
version=$(sed -n 's/^VERSION *:= *//p' Makefile)

# ---- installation ------------------------------------------------------------------------------
# the README's recipe, verbatim but for the interpreter's path; the index is a closed port
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$PY" -m venv --system-site-packages "$T/venv"
PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_RETRIES=0 PIP_TIMEOUT=3 \
  "$T/venv/bin/pip" install --no-build-isolation ./pipeline/python > "$T/pip.log" 2>&1 \
  || { echo "FAIL: pip install from the checkout"; cat "$T/pip.log"; exit 1; }
PYV="$T/venv/bin/python"
[ "$("$T/venv/bin/pip" show gyro | sed -n 's/^Version: //p')" = "$version" ] \
  || { echo "FAIL: package version differs from the Makefile's $version"; exit 1; }
[ "$("$PYV" -c 'import gyro; print(gyro.__version__)')" = "$version" ] || { echo "FAIL: gyro.__version__"; exit 1; }
cmp -s "$("$PYV" -c 'import gyro; print(gyro.proto_dir())')/gyro.proto" proto/gyro.proto \
  || { echo "FAIL: the package does not ship proto/gyro.proto"; exit 1; }
echo "ok   venv install (README recipe) without an index, version $version, gyro.proto shipped"

leftovers=$(find pipeline/python \( -name '*_pb2*.py' -o -name build -o -name '*.egg-info' -o -name dist \) -print)
[ -z "$leftovers" ] || { echo "FAIL: build products in the source tree: $leftovers"; exit 1; }
echo "ok   no generated file in pipeline/python"

mkdir -p "$T/home"
HOME="$T/home" "$PY" -m pip install -q --user --break-system-packages --no-build-isolation --no-index \
  --root-user-action=ignore ./pipeline/python > "$T/pip-user.log" 2>&1 \
  || { echo "FAIL: pip install --user"; cat "$T/pip-user.log"; exit 1; }
where=$(cd "$T" && HOME="$T/home" "$PY" -c 'import gyro; print(gyro.__file__)')
case "$where" in "$T/home/.local/"*) ;; *) echo "FAIL: --user install imported from $where"; exit 1 ;; esac
echo "ok   pip install --user"

make -s install DESTDIR="$T/dest" PREFIX=/usr/local BUILD="${GYRO_BUILD:-build}" > "$T/install.log" 2>&1 \
  || { echo "FAIL: make install"; cat "$T/install.log"; exit 1; }
site=$("$PY" pipeline/python/site_dir.py /usr/local)
[ -f "$T/dest$site/gyro/gyro_pb2.py" ] || { echo "FAIL: make install put no package in $T/dest$site"; cat "$T/install.log"; exit 1; }
cmp -s "$T/dest/usr/local/share/gyro/gyro.proto" proto/gyro.proto || { echo "FAIL: share/gyro/gyro.proto"; exit 1; }
where=$(cd "$T" && PYTHONPATH="$T/dest$site" "$PY" -c 'import gyro; gyro.Client; print(gyro.__file__)')
[ "$where" = "$T/dest$site/gyro/__init__.py" ] || { echo "FAIL: installed package imports from $where"; exit 1; }
make -s install-python DESTDIR="$T/opt" PREFIX=/opt/gyro > "$T/install2.log" 2>&1 \
  || { echo "FAIL: make install-python PREFIX=/opt/gyro"; cat "$T/install2.log"; exit 1; }
ls "$T"/opt/opt/gyro/lib/python3*/site-packages/gyro/client.py > /dev/null || { echo "FAIL: PREFIX=/opt/gyro"; exit 1; }
echo "ok   make install: package in $site, share/gyro/gyro.proto; PREFIX=/opt/gyro"

# ---- streams -----------------------------------------------------------------------------------
mkdir -p "$T/streams"
"$PYV" "$suite_py" streams "$T/streams"

cd "$T"
# gyro normalize -> Python, gyro import -> Python, Python -> gyro
printf '學生ＡＢＣ\xff\n微波爐 👍🏽\n\n  e\xcc\x81  x  \n' | "$GYRO" normalize -q -o docs.pb
"$PYV" "$tool" read docs.pb > docs.py.json
"$GYRO" dump docs.pb > docs.gyro.json
"$PYV" "$tool" compare docs.py.json docs.gyro.json
printf '播放周杰伦的晴天\tmusic.play\n查询歌曲然后播放\t query_song + play_song \n导航到西湖\tnavigation\t会话7\n打电话给妈妈\tphone_call.make_a_phone_call\n' > d.tsv
"$GYRO" import -f tsv -q -o imp.pb d.tsv
"$PYV" "$tool" read imp.pb > imp.py.json
"$GYRO" dump imp.pb > imp.gyro.json
"$PYV" "$tool" compare imp.py.json imp.gyro.json
"$PYV" "$tool" tsv2ex d.tsv py.pb
"$GYRO" dump py.pb > py.gyro.json
cmp -s py.gyro.json imp.gyro.json || { echo "FAIL: Python's examples of d.tsv differ from gyro import's"; diff py.gyro.json imp.gyro.json; exit 1; }
for s in docs imp; do
  "$PYV" "$tool" copy $s.pb $s.copy.pb
  "$GYRO" dump $s.copy.pb | cmp -s - $s.gyro.json || { echo "FAIL: $s copied by Python differs"; exit 1; }
done
echo "ok   gyro normalize and gyro import streams read by Python as gyro dump; Python's streams read by gyro"

# the README's streams example (its second Python block), on these streams
awk '/^## Python/ { s = 1 } s && /^```python/ { n++; if (n == 2) { p = 1; next } } p && /^```/ { exit } p' "$root/README.md" > readme_streams.py
grep -q read_examples readme_streams.py || { echo "FAIL: no streams example in the README"; exit 1; }
cp imp.pb nlpcc.pb
"$PYV" readme_streams.py > readme_streams.out
[ "$(wc -l < readme_streams.out)" = 3 ] && grep -q '^1 学生ABC� ' readme_streams.out || { echo "FAIL: README streams example printed:"; cat readme_streams.out; exit 1; }
[ "$("$GYRO" dump mine.pb | wc -l)" = 2 ] || { echo "FAIL: README streams example wrote:"; "$GYRO" dump mine.pb; exit 1; }
echo "ok   the README's streams example runs"

# corrupt streams: Python's message is the C reader's (gyro dump: <same text>)
hlen=$(( $(od -An -tu1 -N1 docs.pb) + 1 ))          # the header's length prefix is one byte
head -c "$hlen" docs.pb > hdr.bin
head -c -3 docs.pb > bad-body.pb
{ cat docs.pb; printf '\x80'; } > bad-prefix.pb
{ cat hdr.bin; printf '\x80\x80\x80\x32xyz'; } > bad-oversize.pb
{ cat hdr.bin; printf '\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f'; } > bad-varint.pb
{ cat hdr.bin; printf '\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01'; } > bad-long-varint.pb
{ cat docs.pb; printf '\x03\xff\xff\xff'; } > bad-record.pb
"$PYV" -c 'import gyro, sys; h = gyro.StreamHeader(magic="gyro", version=2, message_type="gyro.v1.Document").SerializeToString()
sys.stdout.buffer.write(gyro.encode_varint(len(h)) + h)' > bad-version.pb
printf '\x02ab\x00\x01' > bad-foreign.pb
"$PYV" -c 'import random, sys; r = random.Random(5); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(300)))' > bad-random.pb
printf 'hello world\n' > bad-text.pb
: > bad-empty.pb
for f in bad-*.pb; do
  rc=0; "$GYRO" dump "$f" > /dev/null 2> "$f.c" || rc=$?
  [ $rc = 65 ] || { echo "FAIL: gyro dump $f exit $rc"; exit 1; }
  "$PYV" "$tool" error "$f" > "$f.py" || { echo "FAIL: Python read $f without error"; exit 1; }
  want=$(sed 's/^gyro dump: //' "$f.c")
  got=$(cut -f2- "$f.py")
  [ "$got" = "$want" ] || { echo "FAIL: $f: Python says '$got', gyro '$want'"; exit 1; }
  echo "ok   $f: $(cut -f1 "$f.py"): $got"
done
grep -q '^TruncatedStreamError' bad-body.pb.py && grep -q '^TruncatedStreamError' bad-prefix.pb.py \
  && grep -q '^RecordTooLargeError' bad-oversize.pb.py && grep -q '^StreamFormatError' bad-record.pb.py \
  || { echo "FAIL: exception classes"; cat bad-*.py; exit 1; }

# ---- a real server -----------------------------------------------------------------------------
"$PYV" - <<'PY'
import random
import gyro

rnd = random.Random(7)
songs = ["七里香", "稻香", "晴天", "夜曲", "青花瓷", "告白气球"]
places = ["北京西站", "人民广场", "首都机场", "西湖", "中关村", "火车站"]
names = ["张三", "李四", "王五", "妈妈", "老板", "小明"]
pat = {"music.play": ["播放{s}", "我想听{s}", "来一首{s}", "放一首{s}的歌"],
       "navigation.navigation": ["导航到{p}", "去{p}怎么走", "带我去{p}", "我要去{p}"],
       "phone_call.make_a_phone_call": ["打电话给{n}", "给{n}打个电话", "呼叫{n}", "拨打{n}的电话"],
       "music.play+navigation.navigation": ["导航到{p}并播放{s}", "去{p}的路上放{s}"]}
items = []
for label, ps in pat.items():
    for p in ps:
        for _ in range(6):
            items.append((p.format(s=rnd.choice(songs), p=rnd.choice(places), n=rnd.choice(names)), label))
rnd.shuffle(items)
gyro.write_examples("toy.pb", items, producer="python_package.sh")
with open("toy.txt", "w", encoding="utf-8") as f:
    f.write("\n".join(t for t, _ in items[::6]) + "\n")
PY
"$GYRO" classify train --dim 16 --layers 1 --heads 2 --epochs 15 --seed 1 --quiet -o toy.clf toy.pb
for k in 1 2 3 4 5 6 7 8; do cat toy.txt; done > chars.txt
"$GYRO" char2vec train --dim 5 --epochs 1 --min-count 1 --sample 0 --checkpoint-every 0 -o chars.tab chars.txt 2>/dev/null
"$GYRO" rl finetune --env root -n 2 -S 2 -G 2 --eval 2 -o root.policy > /dev/null 2>&1
cd "$root"
start_server py --model "$T/toy.clf" --embeddings "$T/chars.tab" --policy "$T/root.policy" --threads 2 --pool 2
"$PYV" "$suite_py" client "$ADDR" --texts-file "$T/toy.txt" --n-labels 4 --dim 5

# the README's example, as printed there, against this server
awk '/^## Python/ { s = 1 } s && /^```python/ { p = 1; next } p && /^```/ { exit } p' README.md > "$T/readme_example.py"
[ "$(grep -c . "$T/readme_example.py")" = 5 ] || { echo "FAIL: the README's Python example is not five lines:"; cat "$T/readme_example.py"; exit 1; }
grep -q '127.0.0.1:50051' "$T/readme_example.py" || { echo "FAIL: the README's example does not name the default address"; exit 1; }
sed -i "s/127.0.0.1:50051/$ADDR/" "$T/readme_example.py"
(cd "$T" && "$PYV" readme_example.py) > "$T/readme.out"
cat "$T/readme.out"
[ "$(wc -l < "$T/readme.out")" = 4 ] && awk 'NF != 2 || $2 < 0 || $2 > 1 { bad = 1 } END { exit bad }' "$T/readme.out" \
  || { echo "FAIL: the README's example printed something else"; exit 1; }
echo "ok   the README's five-line example classifies"
stop_server

# TLS
if command -v openssl > /dev/null; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$T/server.key" -out "$T/server.pem" 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=stranger" -keyout "$T/other.key" -out "$T/other.pem" 2>/dev/null
  start_server tls --tls-cert "$T/server.pem" --tls-key "$T/server.key"
  "$PYV" "$suite_py" tls "$ADDR" --ca "$T/server.pem"
  "$PYV" "$suite_py" tls "localhost:$PORT" --ca "$T/server.pem"
  "$PYV" "$suite_py" tls "$ADDR" --ca "$T/server.pem" --server-name wrong.example --expect-fail
  "$PYV" "$suite_py" tls "$ADDR" --ca "$T/other.pem" --expect-fail
  stop_server
  start_server mtls --tls-cert "$T/server.pem" --tls-key "$T/server.key" --tls-client-ca "$T/other.pem"
  "$PYV" "$suite_py" tls "$ADDR" --ca "$T/server.pem" --cert "$T/other.pem" --key "$T/other.key"
  "$PYV" "$suite_py" tls "$ADDR" --ca "$T/server.pem" --expect-fail
  "$PYV" "$suite_py" tls "$ADDR" --ca "$T/server.pem" --cert "$T/server.pem" --key "$T/server.key" --expect-fail
  stop_server
  echo "ok   mutual TLS: the client certificate is required and checked"
fi
