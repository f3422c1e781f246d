"""grpc_suite.py — end-to-end checks of `gyro serve` with Debian's python3-grpcio.

Run with /usr/bin/python3 (the Debian interpreter that has grpcio). The stubs are generated at
test time by the calling script (grpc_tools.protoc into $GEN) and imported from there. Raw-byte
calls (channel.unary_unary without serializers) send garbage and invalid UTF-8 that a protobuf
library would refuse to build.

    grpc_suite.py GEN CHECK ADDR [options]

CHECK is one of: functional, model, tls, mtls, drain, reload-load, watch, watch-drain, ... Each prints one line per
assertion and exits 1 at the first failure.
"""
import os
import sys
import threading
import time

GEN = sys.argv[1]
sys.path.insert(0, GEN)

import grpc  # noqa: E402
import gyro_pb2  # noqa: E402
import gyro_pb2_grpc  # noqa: E402
import health_pb2  # noqa: E402
import health_pb2_grpc  # noqa: E402

SC = grpc.StatusCode


def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def code_of(fn):
    """Run fn(); return (StatusCode, details) of the RpcError it raises, or (OK, result)."""
    try:
        return SC.OK, fn()
    except grpc.RpcError as e:
        return e.code(), e.details()


def raw(channel, path):
    return channel.unary_unary(path)  # bytes in, bytes out


def check_health(channel, want):
    h = health_pb2_grpc.HealthStub(channel)
    r = h.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return r.status == want


def functional(channel, args):
    stub = gyro_pb2_grpc.GyroStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    S = health_pb2.HealthCheckResponse

    r = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    ok(r.status == S.SERVING, "health '' is SERVING")
    r = health.Check(health_pb2.HealthCheckRequest(service="gyro.v1.Gyro"), timeout=5)
    ok(r.status == S.SERVING, "health 'gyro.v1.Gyro' is SERVING")
    c, d = code_of(lambda: health.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=5))
    ok(c == SC.NOT_FOUND and "nope" in d, "health of an unknown service is NOT_FOUND (%s %s)" % (c, d))
    w = health.Watch(health_pb2.HealthCheckRequest(), timeout=5)
    ok(next(w).status == S.SERVING, "Health/Watch starts with SERVING")
    w.cancel()

    # no model loaded: Classify and ClassifyStream are UNAVAILABLE
    c, d = code_of(lambda: stub.Classify(gyro_pb2.ClassifyRequest(text="播放音乐"), timeout=5))
    ok(c == SC.UNAVAILABLE and d, "Classify without a model is UNAVAILABLE (%s: %s)" % (c, d))
    c, d = code_of(lambda: list(stub.ClassifyStream(iter([gyro_pb2.ClassifyRequest(text="x")]), timeout=5)))
    ok(c == SC.UNAVAILABLE, "ClassifyStream without a model is UNAVAILABLE (%s)" % c)

    # Normalize: one Document per line, server streaming
    docs = list(stub.Normalize(gyro_pb2.NormalizeRequest(text="學生 們\n\nＡＢＣ１２３\r\n  x  ", source="t"), timeout=5))
    ok(len(docs) == 4, "Normalize streams one Document per line (%d)" % len(docs))
    ok([d.id for d in docs] == [1, 2, 3, 4] and [d.line for d in docs] == [1, 2, 3, 4], "Document ids and lines")
    ok(docs[0].text == "学生 们" and docs[0].original == "學生 們", "Traditional -> Simplified by default (%r)" % docs[0].text)
    ok(list(docs[0].chars) == ["学", "生", " ", "们"], "grapheme clusters (%r)" % list(docs[0].chars))
    ok(docs[1].text == "" and docs[2].text == "ABC123" and docs[3].text == "x", "NFKC, CRLF and trimming")
    ok(all(d.source == "t" for d in docs), "source is copied")
    docs = list(stub.Normalize(gyro_pb2.NormalizeRequest(text="學生 ABC", keep_traditional=True, case_fold=True), timeout=5))
    ok(len(docs) == 1 and docs[0].text == "學生 abc", "keep_traditional and case_fold (%r)" % docs[0].text)
    docs = list(stub.Normalize(gyro_pb2.NormalizeRequest(text="a\nb\n\n\nc", paragraphs=True), timeout=5))
    ok([d.line for d in docs] == [1, 5] and len(docs) == 2, "paragraph mode (%s)" % [d.line for d in docs])
    ok(list(stub.Normalize(gyro_pb2.NormalizeRequest(text=""), timeout=5)) == [], "an empty text gives no documents")
    for n in (256, 257, 5000):  # produced in batches of 256
        docs = list(stub.Normalize(gyro_pb2.NormalizeRequest(text="".join("行%d\n" % i for i in range(n))), timeout=20))
        ok([d.id for d in docs] == list(range(1, n + 1)) and docs[-1].text == "行%d" % (n - 1),
           "Normalize of %d lines streams %d Documents in order" % (n, len(docs)))
    c, d = code_of(lambda: list(channel.unary_stream("/gyro.v1.Gyro/Normalize")(b"\x0a\x01\x80", timeout=5)))
    ok(c == SC.INVALID_ARGUMENT, "Normalize of invalid UTF-8 is INVALID_ARGUMENT (%s)" % c)
    many = gyro_pb2.NormalizeRequest(text="字\n" * (args.max_bytes // 5))
    t0 = time.time()
    c, d = code_of(lambda: list(stub.Normalize(many, timeout=0.15)))
    ok(c == SC.DEADLINE_EXCEEDED, "a long Normalize stream hits the client deadline (%s after %.2fs)" % (c, time.time() - t0))

    # no embedding table: Embed and Neighbors are UNAVAILABLE
    c, d = code_of(lambda: stub.Embed(gyro_pb2.EmbedRequest(tokens=["音"]), timeout=5))
    ok(c == SC.UNAVAILABLE and "--embeddings" in d, "Embed without a table is UNAVAILABLE (%s)" % c)
    c, d = code_of(lambda: stub.Neighbors(gyro_pb2.NeighborsRequest(token="音"), timeout=5))
    ok(c == SC.UNAVAILABLE, "Neighbors without a table is UNAVAILABLE (%s)" % c)
    c, d = code_of(lambda: stub.Reason(gyro_pb2.ReasonRequest(environment="root"), timeout=5))
    ok(c == SC.UNAVAILABLE and "--policy" in d, "Reason without a policy is UNAVAILABLE (%s)" % c)
    c, d = code_of(lambda: stub.Reason(gyro_pb2.ReasonRequest(environment="composite", input="x"), timeout=5))
    ok(c == SC.UNAVAILABLE and "--composite-policy" in d, "composite Reason without a policy is UNAVAILABLE (%s)" % c)

    # malformed protobuf and invalid UTF-8, sent as raw bytes
    c, d = code_of(lambda: raw(channel, "/gyro.v1.Gyro/Classify")(b"\xff\xff\xff\xff\x0f", timeout=5))
    ok(c == SC.INVALID_ARGUMENT and "ClassifyRequest" in d, "garbage request is INVALID_ARGUMENT (%s: %s)" % (c, d))
    c, d = code_of(lambda: raw(channel, "/gyro.v1.Gyro/Classify")(b"\x0a\x10abc", timeout=5))
    ok(c == SC.INVALID_ARGUMENT, "truncated request is INVALID_ARGUMENT (%s)" % c)
    bad = b"\x0a\x04ab\xff\xfe"  # field 1 (text), 4 bytes, invalid UTF-8
    c, d = code_of(lambda: raw(channel, "/gyro.v1.Gyro/Classify")(bad, timeout=5))
    ok(c == SC.INVALID_ARGUMENT and "UTF-8" in d and "text" in d,
       "invalid UTF-8 text is INVALID_ARGUMENT (%s: %s)" % (c, d))
    over = b"\x0a\x03\xed\xa0\x80"  # an encoded surrogate U+D800
    c, d = code_of(lambda: raw(channel, "/gyro.v1.Gyro/Classify")(over, timeout=5))
    ok(c == SC.INVALID_ARGUMENT, "a UTF-8-encoded surrogate is INVALID_ARGUMENT (%s)" % c)
    c, d = code_of(lambda: raw(channel, "/grpc.health.v1.Health/Check")(b"\x0a\x02\xc0\xaf", timeout=5))
    ok(c == SC.INVALID_ARGUMENT, "overlong UTF-8 in a health request is INVALID_ARGUMENT (%s)" % c)
    # invalid UTF-8 in the middle of a bidi stream ends that stream with INVALID_ARGUMENT
    bidi = channel.stream_stream("/gyro.v1.Gyro/ClassifyStream")
    c, d = code_of(lambda: list(bidi(iter([bad]), timeout=5)))
    ok(c == SC.INVALID_ARGUMENT, "invalid UTF-8 on ClassifyStream is INVALID_ARGUMENT (%s)" % c)
    c, d = code_of(lambda: list(bidi(iter([b"\xff\xff"]), timeout=5)))
    ok(c == SC.INVALID_ARGUMENT, "garbage on ClassifyStream is INVALID_ARGUMENT (%s)" % c)

    # random bytes on every method: each call ends with OK or INVALID_ARGUMENT, never a crash
    import random
    rnd = random.Random(11)
    paths = {"/gyro.v1.Gyro/Classify": "uu", "/gyro.v1.Gyro/Embed": "uu", "/gyro.v1.Gyro/Neighbors": "uu",
             "/gyro.v1.Gyro/Stats": "uu", "/gyro.v1.Gyro/Reason": "uu", "/grpc.health.v1.Health/Check": "uu", "/gyro.v1.Gyro/Normalize": "us",
             "/gyro.v1.Gyro/ClassifyStream": "ss"}
    seen = set()
    for k in range(140):
        path = list(paths)[k % len(paths)]
        body = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
        if paths[path] == "uu":
            c, d = code_of(lambda: raw(channel, path)(body, timeout=5))
        elif paths[path] == "us":
            c, d = code_of(lambda: list(channel.unary_stream(path)(body, timeout=5)))
        else:
            c, d = code_of(lambda: list(channel.stream_stream(path)(iter([body, body]), timeout=5)))
        seen.add(c)
        if c not in (SC.OK, SC.INVALID_ARGUMENT, SC.UNAVAILABLE, SC.NOT_FOUND):
            ok(False, "random bytes on %s gave %s: %s" % (path, c, d))
    ok(SC.INVALID_ARGUMENT in seen, "140 random requests over all methods answered (%s)" % sorted(x.name for x in seen))

    # unknown methods
    for path in ("/gyro.v1.Gyro/NoSuchMethod", "/gyro.v1.Gyro/classify", "/other.Service/Call"):
        c, d = code_of(lambda: raw(channel, path)(b"", timeout=5))
        ok(c == SC.UNIMPLEMENTED, "%s is UNIMPLEMENTED (%s: %s)" % (path, c, d))

    # request size limit
    big = gyro_pb2.ClassifyRequest(text="字" * (args.max_bytes // 3 + 10))
    c, d = code_of(lambda: stub.Classify(big, timeout=10))
    ok(c == SC.RESOURCE_EXHAUSTED, "request over --max-request-bytes is RESOURCE_EXHAUSTED (%s)" % c)

    # deadline: a stream that never sends a request
    never = threading.Event()

    def silent():
        never.wait(3)
        return
        yield  # pragma: no cover

    t0 = time.time()
    c, d = code_of(lambda: list(stub.ClassifyStream(silent(), timeout=0.3)))
    ok(c == SC.DEADLINE_EXCEEDED and time.time() - t0 < 2.5, "client deadline gives DEADLINE_EXCEEDED (%s)" % c)
    never.set()

    # cancellation: start a stream, cancel it from the client
    gate = threading.Event()

    def held():
        gate.wait(5)
        return
        yield  # pragma: no cover

    call = stub.ClassifyStream(held(), timeout=10)
    time.sleep(0.2)
    call.cancel()
    c, d = code_of(lambda: list(call))
    gate.set()
    ok(c == SC.CANCELLED, "a cancelled stream reports CANCELLED (%s)" % c)

    # a zero-length body is a valid empty message
    c, d = code_of(lambda: raw(channel, "/grpc.health.v1.Health/Check")(b"", timeout=5))
    ok(c == SC.OK, "an empty Health/Check request is answered (%s)" % c)

    # counters: the server saw the failures above and is still serving
    time.sleep(0.3)
    st = stub.Stats(gyro_pb2.StatsRequest(), timeout=5)
    counts = {(x.method, x.code): x.count for x in st.status_counts}
    ok(counts.get(("/gyro.v1.Gyro/Classify", "INVALID_ARGUMENT"), 0) >= 3, "Stats counts INVALID_ARGUMENT on Classify")
    ok(counts.get(("/gyro.v1.Gyro/Classify", "UNAVAILABLE"), 0) >= 1, "Stats counts UNAVAILABLE on Classify")
    ok(counts.get(("(unknown method)", "UNIMPLEMENTED"), 0) >= 3, "Stats counts UNIMPLEMENTED")
    ok(counts.get(("/gyro.v1.Gyro/ClassifyStream", "DEADLINE_EXCEEDED"), 0) >= 1, "Stats counts DEADLINE_EXCEEDED")
    ok(counts.get(("/gyro.v1.Gyro/ClassifyStream", "CANCELLED"), 0) >= 1, "Stats counts CANCELLED")
    ok(counts.get(("/gyro.v1.Gyro/Normalize", "OK"), 0) >= 4, "Stats counts Normalize calls")
    ok(len(st.latency) > 5 and st.latency[-1].upper_us == float("inf"), "Stats has a latency histogram")
    streaming = ("/gyro.v1.Gyro/ClassifyStream", "/gyro.v1.Gyro/Normalize", "/grpc.health.v1.Health/Watch")
    unary = sum(v for (m, _), v in counts.items() if m not in streaming)
    cum = [b.count for b in st.latency]
    ok(cum == sorted(cum), "latency buckets are cumulative (count of calls <= upper_us)")
    ok(cum[-1] == unary, "the +Inf bucket equals the unary status counts (%d, %d)" % (cum[-1], unary))
    ok(st.uptime_seconds > 0, "Stats has the uptime")
    ok(check_health(channel, S.SERVING), "server still SERVING after every failure case")


def model(channel, args):
    """Checks that need a loaded model (--expect-labels: labels the model knows)."""
    stub = gyro_pb2_grpc.GyroStub(channel)
    texts = args.texts
    r = stub.Classify(gyro_pb2.ClassifyRequest(text=texts[0], top_k=3, id="req-1"), timeout=10)
    ok(len(r.intents) == min(3, args.n_labels), "Classify returns top_k intents (%d)" % len(r.intents))
    ok(r.id == "req-1", "Classify echoes the id")
    ok(r.model_version != "", "Classify names the model version (%s)" % r.model_version)
    ok(r.normalized_text != "", "Classify returns the normalized text")
    probs = [i.probability for i in r.intents]
    ok(all(0 <= p <= 1 for p in probs) and probs == sorted(probs, reverse=True), "probabilities in [0,1], descending")
    ok(all(i.label for i in r.intents), "labels are non-empty")
    r0 = stub.Classify(gyro_pb2.ClassifyRequest(text=texts[0]), timeout=10)
    ok(len(r0.intents) == min(5, args.n_labels), "top_k 0 means 5")
    again = stub.Classify(gyro_pb2.ClassifyRequest(text=texts[0], top_k=3), timeout=10)
    ok([i.label for i in again.intents] == [i.label for i in r.intents], "Classify is deterministic")
    for i in r.intents:
        if "+" in i.label:
            ok(list(i.atoms) == sorted(i.label.split("+")), "atoms of a composite label are sorted")
    # ClassifyStream: one response per request, in order, matching unary Classify
    reqs = [gyro_pb2.ClassifyRequest(text=t, top_k=2, id=str(k)) for k, t in enumerate(texts)]
    out = list(stub.ClassifyStream(iter(reqs), timeout=20))
    ok(len(out) == len(reqs), "ClassifyStream answers every request (%d/%d)" % (len(out), len(reqs)))
    ok([o.id for o in out] == [q.id for q in reqs], "ClassifyStream answers in order")
    for q, o in zip(reqs, out):
        u = stub.Classify(q, timeout=10)
        ok([i.label for i in u.intents] == [i.label for i in o.intents], "stream and unary agree on %r" % q.text[:20])
    # an empty text is bad input, not a crash
    c, d = code_of(lambda: stub.Classify(gyro_pb2.ClassifyRequest(text="   "), timeout=5))
    ok(c == SC.INVALID_ARGUMENT, "an empty text is INVALID_ARGUMENT (%s: %s)" % (c, d))
    # many concurrent calls
    errs = []

    def worker(n):
        try:
            for k in range(n):
                stub.Classify(gyro_pb2.ClassifyRequest(text=texts[k % len(texts)]), timeout=10)
        except grpc.RpcError as e:
            errs.append(e)

    th = [threading.Thread(target=worker, args=(50,)) for _ in range(8)]
    [t.start() for t in th]
    [t.join() for t in th]
    ok(not errs, "400 concurrent Classify calls succeed (%d errors)" % len(errs))


def same_as_cli(channel, args):
    """Classify answers what `gyro classify predict --stream` wrote (--expect-file, a
    ClassifyResponse stream of the texts of --texts-file as lines, ids "1", "2", ...) with the same
    model and --top-k: the same message, field for field (atoms of composites included)."""
    from google.protobuf.internal.decoder import _DecodeVarint
    data = open(args.expect_file, "rb").read()
    recs, pos = [], 0
    while pos < len(data):
        n, pos = _DecodeVarint(data, pos)
        recs.append(data[pos:pos + n])
        pos += n
    header = gyro_pb2.StreamHeader.FromString(recs[0])
    ok(header.message_type == "gyro.v1.ClassifyResponse", "the CLI wrote a ClassifyResponse stream")
    cli = [gyro_pb2.ClassifyResponse.FromString(r) for r in recs[1:]]
    ok(len(cli) == len(args.texts), "one CLI response per text (%d/%d)" % (len(cli), len(args.texts)))
    stub = gyro_pb2_grpc.GyroStub(channel)
    composites = 0
    for k, (t, c) in enumerate(zip(args.texts, cli)):
        g = stub.Classify(gyro_pb2.ClassifyRequest(text=t, top_k=args.top_k, id=str(k + 1)), timeout=10)
        composites += sum(1 for i in g.intents if len(i.atoms) > 1)
        ok(g == c, "gRPC Classify and classify predict --stream give the same message for %r%s" %
           (t[:20], "" if g == c else ":\n  grpc %s\n  cli  %s" % (g, c)))
    ok(composites > 0, "the answers include composite labels with atoms (%d)" % composites)


def embed(channel, args):
    """Checks against a hyperboloid table of curvature 1 (--dim: its dimension)."""
    import math
    stub = gyro_pb2_grpc.GyroStub(channel)
    M = gyro_pb2
    r = stub.Embed(M.EmbedRequest(tokens=["播", "放", "\u2603"]), timeout=5)
    ok(r.model == M.POINCARE and r.dim == args.dim, "Embed defaults to the Poincare ball (%s, dim %d)" % (r.model, r.dim))
    ok([e.token for e in r.entries] == ["播", "放"] and list(r.missing) == ["\u2603"], "found and missing tokens")
    ok(all(len(e.vector) == args.dim and sum(v * v for v in e.vector) < 1 for e in r.entries), "ball vectors inside the unit ball")
    ok(all(e.count > 0 for e in r.entries), "counts are reported")
    h = stub.Embed(M.EmbedRequest(tokens=["播"], model=M.HYPERBOLOID), timeout=5)
    x = list(h.entries[0].vector)
    ok(h.model == M.HYPERBOLOID and len(x) == args.dim + 1, "hyperboloid vectors have dim+1 coordinates")
    lor = -x[0] * x[0] + sum(v * v for v in x[1:])
    ok(abs(lor + 1) < 1e-3, "hyperboloid vector on the manifold (<x,x>_L = %.5f)" % lor)
    p = [v / (1 + x[0]) for v in x[1:]]
    ok(max(abs(a - b) for a, b in zip(p, r.entries[0].vector)) < 1e-4, "ball and hyperboloid forms agree")
    t = stub.Embed(M.EmbedRequest(text="播放 音乐"), timeout=5)
    ok(len(t.entries) + len(t.missing) == 4, "text is segmented into characters, spaces skipped (%d+%d)" % (len(t.entries), len(t.missing)))
    c, d = code_of(lambda: stub.Embed(M.EmbedRequest(tokens=["播"], model=M.EUCLIDEAN), timeout=5))
    ok(c == SC.FAILED_PRECONDITION, "EUCLIDEAN from a hyperbolic table is FAILED_PRECONDITION (%s)" % c)
    n = stub.Neighbors(M.NeighborsRequest(token="播", k=3), timeout=5)
    ok(n.token == "播" and len(n.neighbors) == 3, "Neighbors returns k neighbours")
    ds = [x.distance for x in n.neighbors]
    ok(ds == sorted(ds) and all(math.isfinite(v) and v > 0 for v in ds), "distances ascending and positive")
    ok("播" not in [x.token for x in n.neighbors], "the query is not its own neighbour")
    ok(len(stub.Neighbors(M.NeighborsRequest(token="播"), timeout=5).neighbors) == min(10, args.rows - 1), "k 0 means 10")
    c, d = code_of(lambda: stub.Neighbors(M.NeighborsRequest(token="\u2603"), timeout=5))
    ok(c == SC.NOT_FOUND, "an unknown character is NOT_FOUND (%s)" % c)
    c, d = code_of(lambda: stub.Neighbors(M.NeighborsRequest(token=""), timeout=5))
    ok(c == SC.NOT_FOUND, "an empty token is NOT_FOUND (%s)" % c)


def reason_composite(channel, args):
    """Checks against a composite-intent policy: the steps and answer of each utterance equal
    what `gyro reason --env composite` printed for it (--expect-file)."""
    stub = gyro_pb2_grpc.GyroStub(channel)
    M = gyro_pb2
    want, cur = [], None
    with open(args.expect_file, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("utterance: "):
                cur = {"utterance": line[len("utterance: "):], "steps": []}
                want.append(cur)
            elif line.startswith("step "):
                act, prob = line.split(": ", 1)[1].rsplit("  (p = ", 1)
                cur["steps"].append((act, float(prob.rstrip(")"))))
            elif line.startswith("intents: "):
                cur["answer"] = line[len("intents: "):]
    ok(len(want) == len(args.texts) and len(want) >= 2, "expected episodes read (%d)" % len(want))
    for w in want:
        r = stub.Reason(M.ReasonRequest(environment="composite", input=w["utterance"]), timeout=10)
        got = [(s.action, s.probability) for s in r.steps]
        ok([a for a, _ in got] == [a for a, _ in w["steps"]] and
           all(abs(p - q) <= 6e-5 for (_, p), (_, q) in zip(got, w["steps"])),
           "Reason composite %r: steps as gyro reason (%s)" % (w["utterance"], [a for a, _ in got]))
        ok(r.answer == w["answer"] and r.answer == "+".join(a for a, _ in got if a != "<stop>"),
           "answer is the emitted set joined with '+' (%s)" % r.answer)
        ok(got[-1][0] == "<stop>" or len(got) == 8, "the episode ends with <stop>")
        ok([s.index for s in r.steps] == list(range(1, len(got) + 1)) and
           all(0 < s.probability <= 1 for s in r.steps), "steps are numbered with probabilities in (0, 1]")
        ok(all(s.state == "+".join(a for a, _ in got[:i]) for i, s in enumerate(r.steps)),
           "each step's state is the set emitted before it")
        ok(r.model_version.startswith("composite-"), "model version %s" % r.model_version)
    a = stub.Reason(M.ReasonRequest(environment="composite", input=want[0]["utterance"]), timeout=10)
    b = stub.Reason(M.ReasonRequest(environment="composite", input=want[0]["utterance"]), timeout=10)
    ok(a == b, "greedy composite episodes are deterministic")
    # concurrent calls share the one loaded policy: every answer is still gyro reason's
    errors = []

    def worker(k):
        for j in range(10):
            w = want[(k + j) % len(want)]
            try:
                r = stub.Reason(M.ReasonRequest(environment="composite", input=w["utterance"]), timeout=20)
                if r.answer != w["answer"]:
                    errors.append("%r: %s != %s" % (w["utterance"], r.answer, w["answer"]))
            except grpc.RpcError as e:
                errors.append("%s: %s" % (e.code(), e.details()))
    th = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for x in th:
        x.start()
    for x in th:
        x.join()
    ok(not errors, "40 concurrent composite calls answer as gyro reason (%s)" % errors[:3])
    e = stub.Reason(M.ReasonRequest(environment="composite", input=""), timeout=10)
    ok(len(e.steps) >= 2 and e.answer, "an empty utterance still gets an episode (%s)" % e.answer)
    c, d = code_of(lambda: stub.Reason(M.ReasonRequest(environment="compositex", input="x"), timeout=10))
    ok(c == SC.INVALID_ARGUMENT, "an unknown environment is INVALID_ARGUMENT (%s: %s)" % (c, d))
    # ReasonRequest field 1 "composite", field 2 invalid UTF-8, as raw bytes
    bad = b"\x0a\x09composite\x12\x03a\xff\xfe"
    c, d = code_of(lambda: raw(channel, "/gyro.v1.Gyro/Reason")(bad, timeout=5))
    ok(c == SC.INVALID_ARGUMENT and "UTF-8" in d, "invalid UTF-8 input is INVALID_ARGUMENT (%s: %s)" % (c, d))
    if args.without_root:
        c, d = code_of(lambda: stub.Reason(M.ReasonRequest(environment="root"), timeout=5))
        ok(c == SC.UNAVAILABLE and "--policy" in d, "root Reason without --policy is UNAVAILABLE (%s)" % c)


def reason(channel, args):
    """Checks against a policy trained for the root-finding environment."""
    stub = gyro_pb2_grpc.GyroStub(channel)
    M = gyro_pb2
    r = stub.Reason(M.ReasonRequest(environment="root", input="1.5"), timeout=10)
    ok(len(r.steps) >= 1 and [s.index for s in r.steps] == list(range(1, len(r.steps) + 1)), "Reason returns numbered steps")
    ok(all(0 < s.probability <= 1 and s.action and s.state for s in r.steps), "steps carry action, probability, state")
    ok(all(s.reward == 0 for s in r.steps[:-1]) and r.steps[-1].reward == r.total_reward, "the reward is terminal")
    ok("MAE" in r.answer and r.model_version.startswith("root-"), "answer and model version (%s, %s)" % (r.answer, r.model_version))
    ok(r.steps[0].state.startswith("x = 1.5"), "the episode starts at the input")
    r2 = stub.Reason(M.ReasonRequest(input="1.5"), timeout=10)
    ok([s.action for s in r2.steps] == [s.action for s in r.steps], "greedy episodes are deterministic; environment may be omitted")
    r3 = stub.Reason(M.ReasonRequest(input="1.5", max_steps=1), timeout=10)
    ok(len(r3.steps) == 1, "max_steps bounds the episode")
    s1 = stub.Reason(M.ReasonRequest(input="1.5", sample=True, seed=5), timeout=10)
    s2 = stub.Reason(M.ReasonRequest(input="1.5", sample=True, seed=5), timeout=10)
    ok([s.action for s in s1.steps] == [s.action for s in s2.steps], "sampled episodes are reproducible by seed")
    for req, want in ((M.ReasonRequest(environment="vanderpol"), SC.FAILED_PRECONDITION),
                      (M.ReasonRequest(environment="nope"), SC.INVALID_ARGUMENT),
                      (M.ReasonRequest(input="abc"), SC.INVALID_ARGUMENT),
                      (M.ReasonRequest(input="1e300"), SC.INVALID_ARGUMENT)):
        c, d = code_of(lambda: stub.Reason(req, timeout=10))
        ok(c == want, "Reason %s -> %s (%s: %s)" % (str(req).replace("\n", " "), want.name, c.name, d))


def watch(channel, args):
    """Health/Watch: the current status at once, SERVICE_UNKNOWN for an unknown service (the
    call stays open), deadlines and cancellations end the call and are counted, the server is
    still healthy after many watches were abandoned."""
    health = health_pb2_grpc.HealthStub(channel)
    S = health_pb2.HealthCheckResponse
    for name in ("", "gyro.v1.Gyro"):
        w = health.Watch(health_pb2.HealthCheckRequest(service=name), timeout=10)
        ok(next(w).status == S.SERVING, "Watch %r starts with SERVING" % name)
        w.cancel()
    # unknown service: SERVICE_UNKNOWN, then nothing more until the deadline (the call stays open)
    w = health.Watch(health_pb2.HealthCheckRequest(service="nope"), timeout=1.0)
    ok(next(w).status == S.SERVICE_UNKNOWN, "Watch of an unknown service says SERVICE_UNKNOWN")
    t0 = time.time()
    c, d = code_of(lambda: next(w))
    ok(c == SC.DEADLINE_EXCEEDED and time.time() - t0 > 0.5,
       "... and stays open, with no further message, until its deadline (%s after %.2f s)" % (c, time.time() - t0))
    # no change, no message: a watch with a 0.6 s deadline gets exactly one message
    w = health.Watch(health_pb2.HealthCheckRequest(), timeout=0.6)
    got, c = [], SC.OK
    try:
        for m in w:
            got.append(m.status)
    except grpc.RpcError as e:
        c = e.code()
    ok(got == [S.SERVING] and c == SC.DEADLINE_EXCEEDED, "a steady status is sent once (%s, then %s)" % (got, c))
    # many watches opened and abandoned (cancelled by the client)
    ws = [health.Watch(health_pb2.HealthCheckRequest(), timeout=30) for _ in range(args.n)]
    firsts = [next(x).status for x in ws]
    ok(all(f == S.SERVING for f in firsts), "%d concurrent watches all start with SERVING" % args.n)
    for x in ws:
        x.cancel()
    stub = gyro_pb2_grpc.GyroStub(channel)
    counts = {}
    for _ in range(40):
        st = stub.Stats(gyro_pb2.StatsRequest(), timeout=5)
        counts = {(x.method, x.code): x.count for x in st.status_counts}
        if counts.get(("/grpc.health.v1.Health/Watch", "CANCELLED"), 0) >= args.n + 2:
            break
        time.sleep(0.1)
    n_c = counts.get(("/grpc.health.v1.Health/Watch", "CANCELLED"), 0)
    n_d = counts.get(("/grpc.health.v1.Health/Watch", "DEADLINE_EXCEEDED"), 0)
    ok(n_c >= args.n + 2, "Stats counts the cancelled watches (%d)" % n_c)
    ok(n_d >= 2, "Stats counts the watches that reached their deadline (%d)" % n_d)
    ok(check_health(channel, S.SERVING), "still SERVING after the abandoned watches")
    # waves of watches opened and cancelled, then a client process killed with watches open
    for _ in range(5):
        ws = [health.Watch(health_pb2.HealthCheckRequest(), timeout=30) for _ in range(100)]
        [next(x) for x in ws]  # started on the server: each end must be counted
        [x.cancel() for x in ws]
    import signal
    import subprocess
    before = n_c
    child = subprocess.Popen([sys.executable, "-c", """
import sys, time
sys.path.insert(0, %r)
import grpc, health_pb2, health_pb2_grpc
ch = grpc.insecure_channel(%r)
h = health_pb2_grpc.HealthStub(ch)
ws = [h.Watch(health_pb2.HealthCheckRequest()) for _ in range(20)]
[next(w) for w in ws]
print("ready", flush=True)
time.sleep(60)
""" % (GEN, args.addr)], stdout=subprocess.PIPE, text=True)
    ok(child.stdout.readline().strip() == "ready", "a client process holds 20 watches")
    child.send_signal(signal.SIGKILL)
    child.wait()
    for _ in range(50):
        st = stub.Stats(gyro_pb2.StatsRequest(), timeout=5)
        counts = {(x.method, x.code): x.count for x in st.status_counts}
        if counts.get(("/grpc.health.v1.Health/Watch", "CANCELLED"), 0) >= before + 500 + 20:
            break
        time.sleep(0.1)
    n_c = counts.get(("/grpc.health.v1.Health/Watch", "CANCELLED"), 0)
    ok(n_c >= before + 520, "500 cancelled watches and the 20 of the killed client are counted CANCELLED (%d more)"
       % (n_c - before))
    ok(check_health(channel, S.SERVING), "still SERVING")


def watch_drain(channel, args):
    """Open --n watches; print the time (since start) of each message and of the end: run across
    a SIGTERM with --drain-ms, the watches must see NOT_SERVING then end UNAVAILABLE."""
    health = health_pb2_grpc.HealthStub(channel)
    S = health_pb2.HealthCheckResponse
    results = [None] * args.n
    started = threading.Barrier(args.n + 1)

    def one(k):
        w = health.Watch(health_pb2.HealthCheckRequest(), timeout=60)
        seen = []
        try:
            for m in w:
                seen.append(S.ServingStatus.Name(m.status))
                if len(seen) == 1:
                    started.wait(10)
            results[k] = (seen, "OK")
        except grpc.RpcError as e:
            results[k] = (seen, e.code().name)

    th = [threading.Thread(target=one, args=(k,)) for k in range(args.n)]
    [t.start() for t in th]
    started.wait(10)
    if args.ready_file:
        open(args.ready_file, "w").close()
    [t.join() for t in th]
    for k, (seen, end) in enumerate(results):
        print("watch %d: %s then %s" % (k, " ".join(seen), end), flush=True)
        ok(seen == ["SERVING", "NOT_SERVING"] and end == "UNAVAILABLE",
           "watch %d saw SERVING, NOT_SERVING at the drain, then UNAVAILABLE at shutdown" % k)


def drain(channel, args):
    """Called right after SIGTERM with --drain-ms: health NOT_SERVING, calls still answered."""
    health = health_pb2_grpc.HealthStub(channel)
    S = health_pb2.HealthCheckResponse
    r = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
    ok(r.status == S.NOT_SERVING, "health is NOT_SERVING during the drain (%s)" % r.status)
    st = gyro_pb2_grpc.GyroStub(channel).Stats(gyro_pb2.StatsRequest(), timeout=5)
    ok(st.uptime_seconds > 0, "calls are still answered during the drain")


def long_stream(channel, args):
    """Open a ClassifyStream that stays open; report how it ended (for the grace test)."""
    stub = gyro_pb2_grpc.GyroStub(channel)
    gate = threading.Event()

    def held():
        gate.wait(60)
        return
        yield  # pragma: no cover

    c, d = code_of(lambda: list(stub.ClassifyStream(held(), timeout=60)))
    print("long stream ended with %s" % c.name, flush=True)
    ok(c in (SC.UNAVAILABLE, SC.CANCELLED), "a stream still open after the grace period is cancelled (%s)" % c)


def reload_load(channel, args):
    """Keep Classify busy until --stop-file exists (at most --seconds); every call must succeed
    (reloads happen meanwhile). --ready-file is created once calls are being answered."""
    stub = gyro_pb2_grpc.GyroStub(channel)
    stop = time.time() + args.seconds
    errs, done, versions = [], [0], set()
    lock = threading.Lock()

    def running():
        if args.ready_file and done[0] > 0 and not os.path.exists(args.ready_file):
            open(args.ready_file, "w").close()  # the load is under way: reloads may start
        return time.time() < stop and not (args.stop_file and os.path.exists(args.stop_file))

    def worker():
        k = 0
        while running():
            try:
                r = stub.Classify(gyro_pb2.ClassifyRequest(text=args.texts[k % len(args.texts)]), timeout=10)
                with lock:
                    done[0] += 1
                    versions.add(r.model_version)
            except grpc.RpcError as e:
                with lock:
                    errs.append("%s %s" % (e.code(), e.details()))
            k += 1

    th = [threading.Thread(target=worker) for _ in range(4)]
    [t.start() for t in th]
    [t.join() for t in th]
    ok(not errs, "no call failed during reloads under load (%d calls, errors: %s)" % (done[0], errs[:3]))
    ok(done[0] > 50, "the load ran (%d calls)" % done[0])
    print("versions seen: %s" % sorted(versions), flush=True)


def tls(channel, args):
    health = health_pb2_grpc.HealthStub(channel)
    r = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
    ok(r.status == health_pb2.HealthCheckResponse.SERVING, "health over TLS")
    st = gyro_pb2_grpc.GyroStub(channel).Stats(gyro_pb2.StatsRequest(), timeout=5)
    ok(st.uptime_seconds > 0, "Stats over TLS")
    c, d = code_of(lambda: raw(channel, "/gyro.v1.Gyro/Classify")(b"\xff\xff", timeout=5))
    ok(c == SC.INVALID_ARGUMENT, "INVALID_ARGUMENT over TLS")


def main():
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("gen")
    p.add_argument("check")
    p.add_argument("addr")
    p.add_argument("--max-bytes", type=int, default=4 << 20)
    p.add_argument("--ca")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--expect-fail", action="store_true", help="the connection itself must fail")
    p.add_argument("--n-labels", type=int, default=0)
    p.add_argument("--texts-file")
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--dim", type=int, default=0)
    p.add_argument("--ready-file")
    p.add_argument("--stop-file")
    p.add_argument("--rows", type=int, default=0)
    p.add_argument("--expect-file")
    p.add_argument("--without-root", action="store_true")
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("-n", type=int, default=50)
    args = p.parse_args()
    args.texts = []
    if args.texts_file:
        with open(args.texts_file, encoding="utf-8") as f:
            args.texts = [l.strip() for l in f if l.strip()]
    opts = [("grpc.max_send_message_length", 64 << 20)]
    if args.ca:
        read = lambda p: open(p, "rb").read() if p else None  # noqa: E731
        creds = grpc.ssl_channel_credentials(root_certificates=read(args.ca), private_key=read(args.key),
                                             certificate_chain=read(args.cert))
        channel = grpc.secure_channel(args.addr, creds, options=opts)
    else:
        channel = grpc.insecure_channel(args.addr, options=opts)
    if args.expect_fail:
        c, d = code_of(lambda: health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3))
        ok(c == SC.UNAVAILABLE, "connection refused as expected (%s: %s)" % (c, (d or "")[:80]))
        return
    {"functional": functional, "model": model, "tls": tls, "drain": drain, "long-stream": long_stream,
     "reload-load": reload_load, "embed": embed, "reason": reason,
     "reason-composite": reason_composite, "same-as-cli": same_as_cli, "watch": watch,
     "watch-drain": watch_drain}[args.check](channel, args)
    channel.close()


if __name__ == "__main__":
    main()
