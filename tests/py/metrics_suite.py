"""metrics_suite.py — the Prometheus endpoint of `gyro serve --metrics-addr`, scraped with urllib
and raw sockets while the server is driven with Debian's python3-grpcio.

    metrics_suite.py GEN ADDR METRICS_HOSTPORT SERVER_PID SERVED_MODEL NEW_MODEL TEXTS_FILE

SERVED_MODEL is the --model path of the running server; NEW_MODEL another model, copied over it
before a SIGHUP. Checks that every line parses as the text exposition format 0.0.4, that the
counters by method and code move by exactly the calls made, that histograms are cumulative and
agree with their _count, that in-flight calls, the model version (the same as in each
ClassifyResponse and in Stats), its load time and the reload counters are right, and that
malformed HTTP requests get 4xx answers (or a closed connection) without harming the server.
One line per assertion; exit 1 at the first failure.
"""
import math
import os
import re
import shutil
import signal
import socket
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
import gyro_pb2  # noqa: E402
import gyro_pb2_grpc  # noqa: E402
import health_pb2  # noqa: E402
import health_pb2_grpc  # noqa: E402

ADDR, HOSTPORT, PID, SERVED, NEW = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
TEXTS = [l.strip() for l in open(sys.argv[7], encoding="utf-8") if l.strip()]
URL = "http://%s/metrics" % HOSTPORT
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def scrape():
    """{(name, frozenset(labels)): value} and {name: type}; every line must parse."""
    with urllib.request.urlopen(URL, timeout=10) as r:
        ctype = r.headers.get("Content-Type", "")
        body = r.read().decode("utf-8")
    assert ctype.startswith("text/plain") and "version=0.0.4" in ctype, ctype
    samples, types = {}, {}
    for line in body.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            continue
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        if not m:
            ok(False, "line parses: %r" % line)
        labels = {}
        if m.group(3):
            rest = m.group(3)
            while rest:
                lm = LABEL.match(rest)
                if not lm:
                    ok(False, "labels parse: %r" % line)
                labels[lm.group(1)] = lm.group(2)
                rest = rest[lm.end():]
        key = (m.group(1), frozenset(labels.items()))
        ok(key not in samples, "no duplicate series %s" % line) if key in samples else None
        v = m.group(4)
        samples[key] = math.inf if v == "+Inf" else float(v)
    return samples, types


def get(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def classify_labels(method):
    return dict(grpc_type="unary", grpc_service="gyro.v1.Gyro", grpc_method=method)


def http_raw(data, read=True, close_early=False):
    """Send raw bytes to the metrics port; the status line answered ('' when closed)."""
    host, port = HOSTPORT.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    try:
        if data:
            s.sendall(data)
        if close_early:
            return ""
        out = b""
        while read:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out.split(b"\r\n", 1)[0].decode("latin-1")
    finally:
        s.close()


def main():
    channel = grpc.insecure_channel(ADDR)
    stub = gyro_pb2_grpc.GyroStub(channel)
    s0, types = scrape()
    ok(types.get("grpc_server_handled_total") == "counter" and types.get("grpc_server_handling_seconds") == "histogram"
       and types.get("gyro_grpc_calls_in_flight") == "gauge", "metric types are declared")
    L = classify_labels("Classify")
    ok(("grpc_server_handled_total", frozenset(dict(L, grpc_code="OK").items())) in s0,
       "every method has its OK series before any call")

    # counters move by exactly the calls made
    versions = set()
    for k in range(20):
        versions.add(stub.Classify(gyro_pb2.ClassifyRequest(text=TEXTS[k % len(TEXTS)]), timeout=10).model_version)
    for _ in range(3):
        try:
            stub.Classify(gyro_pb2.ClassifyRequest(text="   "), timeout=10)
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    try:
        channel.unary_unary("/gyro.v1.Gyro/Nope")(b"", timeout=10)
    except grpc.RpcError:
        pass
    # a call is counted when the server's send of its status completes, which may be just after
    # the client has the status: scrape until the counts arrive (at most 5 s), then check them
    for _ in range(50):
        s1, _ = scrape()
        d_ok = get(s1, "grpc_server_handled_total", grpc_code="OK", **L) - get(s0, "grpc_server_handled_total", grpc_code="OK", **L)
        d_bad = get(s1, "grpc_server_handled_total", grpc_code="INVALID_ARGUMENT", **L) - \
            get(s0, "grpc_server_handled_total", grpc_code="INVALID_ARGUMENT", **L)
        unk = get(s1, "grpc_server_handled_total", grpc_type="unknown", grpc_service="unknown", grpc_method="unknown",
                  grpc_code="UNIMPLEMENTED")
        if d_ok >= 20 and d_bad >= 3 and unk >= 1:
            break
        time.sleep(0.1)
    ok(d_ok == 20 and d_bad == 3, "Classify OK +%d, INVALID_ARGUMENT +%d (20, 3)" % (d_ok, d_bad))
    ok(unk == 1, "an unknown method is counted UNIMPLEMENTED (%d)" % unk)
    # histograms: cumulative, +Inf == _count == all the method's calls, _sum > 0
    for method in ("Classify", "Stats"):
        lab = classify_labels(method)
        buckets = sorted(((float(dict(k[1])["le"]), v) for k, v in s1.items()
                          if k[0] == "grpc_server_handling_seconds_bucket" and set(lab.items()) <= set(k[1])),
                         key=lambda x: x[0])
        counts = [v for _, v in buckets]
        total = get(s1, "grpc_server_handling_seconds_count", **lab)
        calls = sum(v for k, v in s1.items() if k[0] == "grpc_server_handled_total" and set(lab.items()) <= set(k[1]))
        ok(len(buckets) > 10 and buckets[-1][0] == math.inf and counts == sorted(counts),
           "%s latency buckets are cumulative up to +Inf" % method)
        ok(counts[-1] == total == calls, "%s: +Inf bucket %d == _count %d == calls %d" % (method, counts[-1], total, calls))
    ok(get(s1, "grpc_server_handling_seconds_sum", **L) > 0, "Classify latency _sum > 0")
    ok(not any(k[0] == "grpc_server_handling_seconds_bucket" and ("grpc_method", "Watch") in k[1] for k in s1),
       "no latency histogram for streaming methods")
    # Stats agrees: its buckets are cumulative too
    st = stub.Stats(gyro_pb2.StatsRequest(), timeout=10)
    cum = [b.count for b in st.latency]
    ok(cum == sorted(cum) and st.latency[-1].upper_us == math.inf, "Stats latency buckets are cumulative")

    # in flight: open watches count until they are cancelled
    base = get(s1, "gyro_grpc_calls_in_flight")
    health = health_pb2_grpc.HealthStub(channel)
    ws = [health.Watch(health_pb2.HealthCheckRequest(), timeout=30) for _ in range(3)]
    [next(w) for w in ws]
    s2, _ = scrape()
    ok(get(s2, "gyro_grpc_calls_in_flight") == base + 3, "3 open watches are in flight (%d, before %d)"
       % (get(s2, "gyro_grpc_calls_in_flight"), base))
    [w.cancel() for w in ws]
    for _ in range(300):  # up to 30 s: a loaded machine
        s2, _ = scrape()
        if get(s2, "gyro_grpc_calls_in_flight") == base:
            break
        time.sleep(0.1)
    ok(get(s2, "gyro_grpc_calls_in_flight") == base, "back to %d in flight once cancelled" % base)
    ok(get(s2, "gyro_health_serving") == 1, "gyro_health_serving 1")

    # the model: version as in every ClassifyResponse and in Stats, load time, reloads
    info = [dict(k[1])["version"] for k, v in s2.items() if k[0] == "gyro_model_info" and v == 1]
    ok(len(versions) == 1 and info == list(versions) == [st.model_version],
       "gyro_model_info version %s == ClassifyResponse.model_version == Stats" % info)
    loaded = get(s2, "gyro_model_loaded_timestamp_seconds")
    ok(time.time() - 600 < loaded <= time.time() + 1, "load time is a recent Unix time (%.0f)" % loaded)
    ok(0 < get(s2, "gyro_model_load_duration_seconds") < 60, "load duration %.6f s" % get(s2, "gyro_model_load_duration_seconds"))
    tmp = SERVED + ".new"
    shutil.copyfile(NEW, tmp)
    os.replace(tmp, SERVED)
    os.kill(PID, signal.SIGHUP)
    for _ in range(600):  # up to 30 s: a loaded machine
        s3, _ = scrape()
        if get(s3, "gyro_model_reloads_total", result="ok") == 1:
            break
        time.sleep(0.05)
    info3 = [dict(k[1])["version"] for k, v in s3.items() if k[0] == "gyro_model_info"]
    v3 = stub.Classify(gyro_pb2.ClassifyRequest(text=TEXTS[0]), timeout=10).model_version
    ok(get(s3, "gyro_model_reloads_total", result="ok") == 1 and len(info3) == 1 and info3 != info and info3 == [v3],
       "after SIGHUP: one ok reload, a new version %s, the one ClassifyResponse names" % info3)
    ok(get(s3, "gyro_model_loaded_timestamp_seconds") >= loaded, "the load time moved forward")
    with open(tmp, "wb") as f:
        f.write(b"not a model")
    os.replace(tmp, SERVED)
    os.kill(PID, signal.SIGHUP)
    for _ in range(600):
        s4, _ = scrape()
        if get(s4, "gyro_model_reloads_total", result="refused") == 1:
            break
        time.sleep(0.05)
    info4 = [dict(k[1])["version"] for k, v in s4.items() if k[0] == "gyro_model_info"]
    ok(get(s4, "gyro_model_reloads_total", result="refused") == 1 and info4 == info3,
       "a bad file: one refused reload, the version unchanged")

    # HTTP: answers to malformed and unusual requests; the server lives on
    cases = [(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200"),
             (b"HEAD /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 200"),
             (b"GET /metrics?x=1 HTTP/1.0\n\n", "HTTP/1.1 200"),
             (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405"),
             (b"GET /nope HTTP/1.1\r\n\r\n", "HTTP/1.1 404"),
             (b"GET /metrics HTTP/2.0\r\n\r\n", "HTTP/1.1 505"),
             (b"garbage\r\n\r\n", "HTTP/1.1 400"),
             (b"GET  /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400"),
             (b"G\x00T /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400"),
             (b"GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", "HTTP/1.1 400"),
             (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n", "HTTP/1.1 431"),
             (os.urandom(3000).replace(b"\n", b"x") + b"\r\n\r\n", "HTTP/1.1 400")]
    for data, want in cases:
        got = http_raw(data)
        ok(got.startswith(want + " "), "%r... -> %s (%s)" % (data[:24], want, got))
    head = b""
    s = socket.create_connection(HOSTPORT.rsplit(":", 1), timeout=10)
    s.sendall(b"HEAD /metrics HTTP/1.1\r\n\r\n")
    while True:
        c = s.recv(65536)
        if not c:
            break
        head += c
    s.close()
    ok(head.endswith(b"\r\n\r\n") and b"Content-Length: " in head, "HEAD answers the headers without a body")
    # a silent client and one that leaves halfway: the next scrape still works, within the I/O timeout
    silent = socket.create_connection(HOSTPORT.rsplit(":", 1), timeout=10)
    http_raw(b"GET /metr", close_early=True)
    t0 = time.time()
    s5, _ = scrape()
    ok(time.time() - t0 < 5 and s5, "a silent client delays a scrape by at most the I/O timeout (%.1f s)" % (time.time() - t0))
    silent.close()
    ok(health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1, "the gRPC server is still SERVING")
    channel.close()


if __name__ == "__main__":
    main()
