#!/usr/bin/env python3
"""grpc-health-check-hex.py — the bytes HAProxy's tcp-check sends to ask a gRPC server
grpc.health.v1.Health/Check, printed in hex for `tcp-check send-binary` (haproxy-gyro.cfg).

    doc/deploy/grpc-health-check-hex.py [SERVICE]     (SERVICE: "" = the whole server, the default)

HAProxy's http-check cannot send a gRPC request: every gRPC message begins with a NUL byte (the
compressed flag) and http-check bodies are C strings. So the check speaks HTTP/2 itself, over a
plain TCP check (prior knowledge, no TLS): the client connection preface (RFC 9113 §3.4), an
empty SETTINGS frame, a HEADERS frame on stream 1 (POST /grpc.health.v1.Health/Check,
content-type application/grpc, te: trailers; HPACK literals without indexing and without
Huffman coding, RFC 7541 §6.2.2, so no compression state is kept) and a DATA frame ending the
stream with one gRPC message: flag 0, 4-byte big-endian length, the HealthCheckRequest. The
server answers with HEADERS, a DATA frame holding the HealthCheckResponse message
00 00000002 08 0s (field 1, status s: 1 SERVING, 2 NOT_SERVING) and trailers; the config waits
for any such message, then passes only s = 1.
"""
import struct
import sys


def frame(ftype, flags, stream, payload):
    """One HTTP/2 frame: 24-bit length, type, flags, 31-bit stream id, payload."""
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    """HPACK literal header field without indexing; name: a static-table index or bytes."""
    if isinstance(name, int):
        head = bytes([name]) if name < 15 else bytes([0x0F, name - 15])
    else:
        head = b"\x00" + bytes([len(name)]) + name
    return head + bytes([len(value)]) + value


def request(service=b""):
    headers = (b"\x83"                                               # :method POST (static 3)
               + b"\x86"                                             # :scheme http (static 6)
               + literal(4, b"/grpc.health.v1.Health/Check")         # :path (static 4)
               + literal(1, b"gyro")                                 # :authority (static 1)
               + literal(31, b"application/grpc")                    # content-type (static 31)
               + literal(b"te", b"trailers"))
    msg = (b"\x0a" + bytes([len(service)]) + service) if service else b""  # HealthCheckRequest.service = 1
    grpc_msg = b"\x00" + struct.pack(">I", len(msg)) + msg
    return (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            + frame(0x4, 0, 0, b"")                                  # SETTINGS, defaults
            + frame(0x1, 0x4, 1, headers)                            # HEADERS, END_HEADERS
            + frame(0x0, 0x1, 1, grpc_msg))                          # DATA, END_STREAM


if __name__ == "__main__":
    service = sys.argv[1].encode() if len(sys.argv) > 1 else b""
    if len(service) > 127:
        sys.exit("grpc-health-check-hex.py: a service name of at most 127 bytes")
    print(request(service).hex())
