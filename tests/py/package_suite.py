"""package_suite.py — checks of the gyro Python package (pipeline/python) for
tests/e2e/python_package.sh. Run with the python of an environment where the package is
installed. Prints one line per assertion and exits 1 at the first failure.

    package_suite.py streams DIR        the stream API offline (varints, reader errors, writer
                                        limits and atomicity, helpers); scratch files in DIR
    package_suite.py client ADDR --texts-file F --n-labels N --dim D
                                        every Client method against a `gyro serve` with a
                                        model, a character table and a root-finding policy
    package_suite.py tls ADDR --ca PEM [--server-name NAME] [--cert PEM --key PEM] [--expect-fail]
                                        Client over TLS (mutual TLS with --cert and --key)
"""
import argparse
import io
import math
import os
import sys
import threading

import grpc

import gyro
from gyro import errors


def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def raises(fn, cls):
    """The exception of class `cls` that fn() raises, or None (any other outcome)."""
    try:
        fn()
    except cls as e:
        return e
    except Exception as e:  # noqa: BLE001 — reported as a failure by the caller
        print("     (raised %s: %s)" % (type(e).__name__, e))
        return None
    return None


def header_bytes(message_type="gyro.v1.Document", version=1):
    h = gyro.StreamHeader(magic="gyro", version=version, message_type=message_type, producer="t").SerializeToString()
    return gyro.encode_varint(len(h)) + h


# ---- streams ---------------------------------------------------------------------------------

def streams(args):
    d = args.dir
    # varints: the encoding of protobuf (values from the spec's examples) and the C reader's limits
    for v, b in ((0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
                 (2 ** 64 - 1, b"\xff" * 9 + b"\x01")):
        ok(gyro.encode_varint(v) == b and gyro.decode_varint(b) == (v, len(b)), "varint %d <-> %s" % (v, b.hex()))
    ok(raises(lambda: gyro.encode_varint(2 ** 64), ValueError) is not None, "encode_varint refuses 2**64")
    ok(raises(lambda: gyro.encode_varint(-1), ValueError) is not None, "encode_varint refuses -1")
    ok(raises(lambda: gyro.decode_varint(b"\x80\x80"), ValueError) is not None, "decode_varint: truncated")
    ok(raises(lambda: gyro.decode_varint(b"\xff" * 9 + b"\x02"), ValueError) is not None, "decode_varint: over 64 bits")
    ok(gyro.decode_varint(b"\x05\xac\x02", 1) == (300, 3), "decode_varint from an offset")

    # round trip through bytes, file objects and paths; the header is written and read
    docs = [gyro.Document(id=k, text="文%d" % k, chars=["文", str(k)]) for k in range(1, 4)]
    buf = io.BytesIO()
    with gyro.StreamWriter(buf, gyro.Document, producer="suite") as w:
        w.write_all(docs)
    ok(w.count == 3, "writer counts records (%d)" % w.count)
    data = buf.getvalue()
    r = gyro.StreamReader(data)
    ok(r.header.magic == "gyro" and r.header.version == 1 and r.header.producer == "suite"
       and r.message_type == "gyro.v1.Document" and r.message_class is gyro.Document, "header read back")
    got = list(r)
    ok(got == docs and r.record == 3, "records read back in order (%d)" % len(got))
    ok(list(gyro.read_stream(io.BytesIO(data), gyro.Document)) == docs, "read_stream from a file object")
    p = os.path.join(d, "docs.pb")
    ok(gyro.write_documents(p, [gyro.to_dict(x) for x in docs]) == 3, "write_documents from dicts")
    ok(list(gyro.read_documents(p)) == docs, "read_documents of a path")
    ok(gyro.StreamReader(p).header.producer == "python gyro %s" % gyro.__version__, "default producer")
    empty = os.path.join(d, "empty.pb")
    ok(gyro.write_stream(empty, [], gyro.Example) == 0 and list(gyro.read_examples(empty)) == [],
       "a stream with a header and no record")
    ok(raises(lambda: gyro.write_stream(empty, []), TypeError) is not None, "write_stream of nothing needs a type")

    # reader errors: the C reader's messages, record numbers and offsets
    h = header_bytes()
    one = gyro.Document(id=1, text="x").SerializeToString()
    rec1 = gyro.encode_varint(len(one)) + one
    cases = [
        (b"", errors.StreamFormatError, "<bytes>: record 0 at byte 0: empty input: no gyro stream header"),
        (b"hello\n", errors.TruncatedStreamError, "<bytes>: record 0 at byte 0: truncated: length prefix says 104 bytes, 5 remain"),
        (h + rec1 + b"\x80", errors.TruncatedStreamError,
         "<bytes>: record 2 at byte %d: truncated: the stream ends inside a length prefix" % (len(h) + len(rec1))),
        (h + rec1 + b"\x34abc", errors.TruncatedStreamError,
         "<bytes>: record 2 at byte %d: truncated: length prefix says 52 bytes, 3 remain" % (len(h) + len(rec1))),
        (h + gyro.encode_varint(100 << 20) + b"xx", errors.RecordTooLargeError,
         "<bytes>: record 1 at byte %d: length prefix says 104857600 bytes, over the limit of 67108864 bytes" % len(h)),
        (h + b"\xff" * 9 + b"\x7f", errors.StreamFormatError,
         "<bytes>: record 1 at byte %d: malformed length prefix (varint over 64 bits)" % len(h)),
        (h + b"\x80" * 10 + b"\x01", errors.StreamFormatError,
         "<bytes>: record 1 at byte %d: malformed length prefix (more than 10 bytes)" % len(h)),
        (h + rec1 + b"\x03\xff\xff\xff", errors.StreamFormatError,
         "<bytes>: record 2 at byte %d: a 3-byte record does not unpack as gyro.v1.Document" % (len(h) + len(rec1))),
        (gyro.encode_varint(len(one)) + one, errors.StreamFormatError,
         "<bytes>: record 0 at byte 0: not a gyro stream (no StreamHeader with magic \"gyro\"; for a stream without header give its type)"),
        (header_bytes(version=2), errors.StreamVersionError,
         "<bytes>: record 0 at byte 0: stream format version 2 is newer than this gyro reads (1); upgrade gyro to read it"),
        (header_bytes(message_type=""), errors.StreamFormatError, "<bytes>: record 0 at byte 0: stream header names no message type"),
    ]
    for data, cls, want in cases:
        e = raises(lambda: list(gyro.read_stream(data)), cls)
        ok(e is not None and str(e) == want, "%s: %s" % (cls.__name__, e))
        ok(isinstance(e, gyro.StreamError) and isinstance(e, ValueError), "  a StreamError and a ValueError")
    e = raises(lambda: list(gyro.read_stream(h + rec1 + rec1[:-1])), errors.TruncatedStreamError)
    ok(e is not None and (e.record, e.offset) == (2, len(h) + len(rec1)) and e.name == "<bytes>"
       and e.reason.startswith("truncated"), "record, offset, name and reason attributes")
    # records before the error are returned; the error is sticky
    r = gyro.StreamReader(h + rec1 + b"\x05ab")
    ok(r.read().id == 1, "the record before a truncation is read")
    e1 = raises(r.read, errors.TruncatedStreamError)
    e2 = raises(r.read, errors.TruncatedStreamError)
    ok(e1 is not None and e2 is not None and str(e1) == str(e2), "errors are sticky")
    # a smaller limit; the name given for messages
    e = raises(lambda: gyro.StreamReader(h + rec1, name="in.pb", max_record=4), errors.RecordTooLargeError)
    ok(e is not None and str(e).startswith("in.pb: record 0 at byte 0: length prefix says")
       and "over the limit of 4 bytes" in str(e), "max_record applies to the header too (%s)" % e)
    # type checks
    e = raises(lambda: list(gyro.read_examples(h + rec1)), errors.StreamFormatError)
    ok(e is not None and str(e) == "<bytes>: record 0 at byte 0: the stream holds gyro.v1.Document records, "
       "expected gyro.v1.Example", "read_examples of a Document stream: %s" % e)
    unknown = header_bytes(message_type="other.v1.Thing") + rec1
    r = gyro.StreamReader(unknown)
    ok(r.message_class is None and r.read_raw() == one, "an unknown record type is readable raw")
    ok(raises(gyro.StreamReader(unknown).read, errors.StreamFormatError) is not None, "and refused as messages")
    # headerless streams
    ex = [gyro.example("播放", "music.play", line=1), gyro.example("导航", "navigation", line=2)]
    raw = b"".join(gyro.encode_varint(m.ByteSize()) + m.SerializeToString() for m in ex)
    r = gyro.StreamReader(raw, headerless_type=gyro.Example)
    ok(list(r) == ex and r.header.producer == "" and r.message_type == "gyro.v1.Example", "headerless stream with its type")
    ok(list(gyro.read_examples(raw, headerless_type="gyro.v1.Example")) == ex,
       "headerless_type as a full name")
    ok(list(gyro.read_documents(h + rec1, headerless_type=gyro.Document))[0].id == 1,
       "a stream with a header is accepted when a headerless type is given")
    ok(list(gyro.StreamReader(b"", headerless_type=gyro.Example)) == [], "an empty headerless stream has no records")

    # the writer: type check, limit (nothing written, the stream stays valid), atomic paths
    w = gyro.StreamWriter(io.BytesIO(), gyro.Document)
    e = raises(lambda: w.write(gyro.Example(text="x")), TypeError)
    ok(e is not None and "writing a gyro.v1.Example into a stream of gyro.v1.Document" in str(e), "wrong type: %s" % e)
    buf = io.BytesIO()
    w = gyro.StreamWriter(buf, gyro.Document, max_record=64)
    w.write(gyro.Document(id=1, text="short"))
    e = raises(lambda: w.write(gyro.Document(id=2, text="长" * 100)), errors.RecordTooLargeError)
    ok(e is not None and "a gyro.v1.Document record of 305 bytes is over the limit of 64 bytes" in str(e)
       and e.record == 2, "writer limit: %s" % e)
    w.write(gyro.Document(id=3, text="after"))
    w.close()
    ok([x.id for x in gyro.read_documents(buf.getvalue())] == [1, 3], "the stream stays valid after a refused record")
    target = os.path.join(d, "atomic.pb")
    gyro.write_documents(target, docs[:1])
    before = open(target, "rb").read()

    def failing():
        with gyro.StreamWriter(target, gyro.Document) as w2:
            w2.write(docs[0])
            w2.write(docs[1])
            raise RuntimeError("stop")
    ok(raises(failing, RuntimeError) is not None and open(target, "rb").read() == before,
       "an error inside `with` leaves the target unchanged")
    ok(not [f for f in os.listdir(d) if ".tmp." in f], "no temporary file left behind")
    w3 = gyro.StreamWriter(target, gyro.Document)
    w3.write(docs[2])
    ok(open(target, "rb").read() == before, "the target is unchanged until close()")
    w3.close()
    ok([x.id for x in gyro.read_documents(target)] == [3], "close() commits")

    # helpers: labels as gyro import parses them, dicts, JSON as gyro dump prints it
    ok(gyro.parse_label(" query_song + play_song ") == ("query_song+play_song", ["play_song", "query_song"]),
       "composite label: trimmed name, sorted atoms")
    ok(gyro.parse_label("b+a+b") == ("b+a+b", ["a", "b"]), "atoms deduplicated, order kept in the name")
    for bad in ("", "a++b", "a..b", "a.", "播 放", "a\u3000b", "a\u200bb"):
        ok(raises(lambda: gyro.parse_label(bad), ValueError) is not None, "label %r refused" % bad)
    e = gyro.example("播放晴天", "music.play", source="s", session="x", line=4)
    ok(list(e.labels) == ["music.play"] and e.line == 4, "example() fills labels")
    ok(gyro.to_dict(e) == {"text": "播放晴天", "label": "music.play", "labels": ["music.play"], "source": "s",
                           "session": "x", "line": "4"}, "to_dict: proto names, uint64 as a string")
    ok(gyro.from_dict(gyro.Example, gyro.to_dict(e)) == e and gyro.from_dict("gyro.v1.Example", {"line": 4}).line == 4,
       "from_dict inverts to_dict")
    ok(gyro.to_json(gyro.Document(id=2, text="学")) == '{"id":"2","text":"学"}', "to_json is compact UTF-8")
    p = os.path.join(d, "ex.pb")
    n = gyro.write_examples(p, [("播放晴天", "music.play"), {"text": "导航", "label": "a + b"}, e])
    got = list(gyro.read_examples(p))
    ok(n == 3 and [x.label for x in got] == ["music.play", "a+b", "music.play"] and got[0].line == 1
       and list(got[1].labels) == ["a", "b"], "write_examples from tuples, dicts and messages")
    ok(raises(lambda: gyro.write_examples(os.path.join(d, "bad.pb"), [("x", "a++b")]), ValueError) is not None
       and not os.path.exists(os.path.join(d, "bad.pb")), "a bad label writes no file")
    ok(gyro.message_class("grpc.health.v1.HealthCheckResponse") is gyro.HealthCheckResponse
       and "gyro.v1.Example" in gyro.message_types(), "message classes by full name")
    with open(os.path.join(gyro.proto_dir(), "gyro.proto"), encoding="utf-8") as f:
        ok("package gyro.v1;" in f.read(), "gyro.proto ships with the package (%s)" % gyro.proto_dir())


# ---- client ----------------------------------------------------------------------------------

def client(args):
    texts = args.texts
    with gyro.Client(args.addr, timeout=10) as c:
        c.wait_ready(timeout=10)
        ok(c.health() == "SERVING" and c.health("gyro.v1.Gyro") == "SERVING", "health: SERVING")
        e = raises(lambda: c.health("nope"), gyro.NotFound)
        ok(e is not None and e.code == grpc.StatusCode.NOT_FOUND and e.method == "/grpc.health.v1.Health/Check"
           and isinstance(e, gyro.RpcError) and isinstance(e.__cause__, grpc.RpcError),
           "an unknown health service raises gyro.NotFound (%s)" % e)

        w = c.watch_health(timeout=10)
        ok(next(w) == "SERVING", "watch_health: SERVING at once")
        w.close()  # cancels the call
        w = c.watch_health("nope", timeout=0.5)
        ok(next(w) == "SERVICE_UNKNOWN", "watch_health of an unknown service: SERVICE_UNKNOWN")
        ok(raises(lambda: next(w), gyro.DeadlineExceeded) is not None, "... then nothing until the deadline")

        r = c.classify(texts[0], top_k=3, id="q1")
        ok(isinstance(r, gyro.ClassifyResponse) and len(r.intents) == min(3, args.n_labels) and r.id == "q1",
           "classify: top 3 intents, id echoed (%s)" % [(i.label, round(i.probability, 3)) for i in r.intents])
        probs = [i.probability for i in r.intents]
        ok(probs == sorted(probs, reverse=True) and all(0 <= p <= 1 for p in probs) and r.model_version,
           "classify: probabilities descending, model version %s" % r.model_version)
        ok(len(c.classify(texts[0]).intents) == min(5, args.n_labels), "classify: top_k 0 is the server's 5")
        e = raises(lambda: c.classify("   "), gyro.InvalidArgument)
        ok(e is not None and e.code == grpc.StatusCode.INVALID_ARGUMENT and e.details, "empty text: InvalidArgument (%s)" % e)

        out = list(c.classify_stream(texts, top_k=2))
        ok(len(out) == len(texts) and [o.id for o in out] == [str(k) for k in range(len(texts))],
           "classify_stream: one response per text, in order (%d)" % len(out))
        ok(all([i.label for i in o.intents] == [i.label for i in c.classify(t, top_k=2).intents]
               for o, t in zip(out, texts)), "classify_stream agrees with classify")
        reqs = (gyro.ClassifyRequest(text=t, id="r%d" % k) for k, t in enumerate(texts[:3]))
        ok([o.id for o in c.classify_stream(reqs)] == ["r0", "r1", "r2"], "classify_stream of requests from a generator")
        e = raises(lambda: list(c.classify_stream(["ok", "  "])), gyro.InvalidArgument)
        ok(e is not None and e.method == "/gyro.v1.Gyro/ClassifyStream", "an error mid-stream is raised while iterating (%s)" % e)

        docs = list(c.normalize("學生 們\n\nＡＢＣ", source="py"))
        ok([d.text for d in docs] == ["学生 们", "", "ABC"] and docs[0].source == "py" and isinstance(docs[0], gyro.Document),
           "normalize: one Document per line, T2S and NFKC")
        ok([d.text for d in c.normalize("學 ABC", keep_traditional=True, case_fold=True)] == ["學 abc"],
           "normalize: keep_traditional and case_fold")
        ok([d.line for d in c.normalize("a\nb\n\n\nc", paragraphs=True)] == [1, 5], "normalize: paragraphs")
        big = "".join("行%d\n" % k for k in range(3000))
        it = c.normalize(big)
        first = next(it)
        it.close()  # cancels the rest of the stream
        ok(first.id == 1, "closing a stream early cancels it")
        e = raises(lambda: list(c.normalize(big * 20, timeout=0.05)), gyro.DeadlineExceeded)
        ok(e is not None, "a per-call timeout raises gyro.DeadlineExceeded")

        em = c.embed(["播", "放", "\u2603"])
        ok(em.model == gyro.POINCARE and em.dim == args.dim and [x.token for x in em.entries] == ["播", "放"]
           and list(em.missing) == ["\u2603"], "embed: Poincaré vectors, missing tokens")
        ok(all(sum(v * v for v in x.vector) < 1 for x in em.entries), "embed: inside the unit ball")
        hy = c.embed(["播"], model="hyperboloid")
        x = list(hy.entries[0].vector)
        ok(hy.model == gyro.HYPERBOLOID and len(x) == args.dim + 1 and abs(-x[0] * x[0] + sum(v * v for v in x[1:]) + 1) < 1e-3,
           "embed: hyperboloid vectors on the manifold")
        ok(len(c.embed(text="播放 音乐").entries) + len(c.embed(text="播放 音乐").missing) == 4, "embed: text segmented")
        ok(raises(lambda: c.embed(["播"], model="euclidean"), gyro.FailedPrecondition) is not None,
           "embed: EUCLIDEAN from a hyperbolic table is FailedPrecondition")
        ok(raises(lambda: c.embed(["播"], model="klein"), ValueError) is not None, "embed: an unknown model name is a ValueError")

        nb = c.neighbors("播", k=3)
        ds = [n.distance for n in nb.neighbors]
        ok(nb.token == "播" and len(ds) == 3 and ds == sorted(ds) and all(math.isfinite(v) and v > 0 for v in ds),
           "neighbors: 3 nearest, ascending distances")
        ok(raises(lambda: c.neighbors("\u2603"), gyro.NotFound) is not None, "neighbors: unknown character NotFound")

        rs = c.reason("1.5")
        ok(len(rs.steps) >= 1 and rs.steps[-1].reward == rs.total_reward and rs.model_version.startswith("root-"),
           "reason: an episode of the root-finding policy (%d steps, %s)" % (len(rs.steps), rs.answer))
        ok(len(c.reason("1.5", max_steps=1).steps) == 1, "reason: max_steps")
        ok([s.action for s in c.reason("1.5", sample=True, seed=3).steps]
           == [s.action for s in c.reason("1.5", sample=True, seed=3).steps], "reason: sampled episodes reproducible")
        ok(raises(lambda: c.reason(environment="nope"), gyro.InvalidArgument) is not None, "reason: unknown environment")
        ok(raises(lambda: c.reason("x", environment="composite"), gyro.Unavailable) is not None,
           "reason: composite without --composite-policy is Unavailable")

        st = c.stats()
        counts = {(s.method, s.code): s.count for s in st.status_counts}
        ok(counts.get(("/gyro.v1.Gyro/Classify", "OK"), 0) >= 3 and counts.get(("/gyro.v1.Gyro/Classify", "INVALID_ARGUMENT"), 0) >= 1
           and st.uptime_seconds > 0, "stats: the calls above are counted")
        ok(c.model_version() == r.model_version != "", "model_version() is the one each ClassifyResponse names")

        # concurrent calls on one client
        errs = []

        def worker():
            try:
                for k in range(20):
                    c.classify(texts[k % len(texts)])
            except gyro.RpcError as e:
                errs.append(e)
        th = [threading.Thread(target=worker) for _ in range(4)]
        [t.start() for t in th]
        [t.join() for t in th]
        ok(not errs, "80 concurrent classify calls on one Client (%s)" % errs[:1])

        # raw stubs stay reachable
        ok(c.stub.Stats(gyro.StatsRequest(), timeout=5).uptime_seconds > 0, "the generated stub is public")

    # a closed port: Unavailable, within the timeout
    dead = gyro.Client("127.0.0.1:1", timeout=2)
    e = raises(lambda: dead.classify("x"), gyro.Unavailable)
    ok(e is not None and e.code == grpc.StatusCode.UNAVAILABLE, "no server: gyro.Unavailable (%s)" % str(e)[:80])
    ok(raises(lambda: dead.wait_ready(timeout=0.5), gyro.Unavailable) is not None, "wait_ready times out as Unavailable")
    dead.close()


def tls(args):
    c = gyro.Client(args.addr, root_certificates=args.ca, server_name=args.server_name, timeout=5,
                    private_key=args.key, certificate_chain=args.cert)
    if args.expect_fail:
        ok(raises(c.health, gyro.Unavailable) is not None, "TLS refused as expected")
    else:
        ok(c.health() == "SERVING" and c.stats().uptime_seconds > 0, "health and stats over TLS (%s)" % args.addr)
        def pem(path):
            if path is None:
                return None
            with open(path, "rb") as f:
                return f.read()
        c2 = gyro.Client(args.addr, root_certificates=pem(args.ca), server_name=args.server_name, timeout=5,
                         private_key=pem(args.key), certificate_chain=pem(args.cert))
        ok(c2.health() == "SERVING", "certificates given as PEM bytes")
        c2.close()
    c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("check")
    p.add_argument("target")
    p.add_argument("--texts-file")
    p.add_argument("--n-labels", type=int, default=0)
    p.add_argument("--dim", type=int, default=0)
    p.add_argument("--ca")
    p.add_argument("--server-name")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--expect-fail", action="store_true")
    args = p.parse_args()
    args.dir = args.addr = args.target
    args.texts = []
    if args.texts_file:
        with open(args.texts_file, encoding="utf-8") as f:
            args.texts = [line.strip() for line in f if line.strip()]
    {"streams": streams, "client": client, "tls": tls}[args.check](args)


if __name__ == "__main__":
    main()
