#!/usr/bin/env bash
# grpc_tls.sh — `gyro serve` over TLS and mutual TLS with certificates made by openssl at test
# time: Python and C clients succeed with the right roots (and client certificate), and are
# refused without them.
set -eu
. tests/py/grpc_lib.bash
grpc_setup
command -v openssl >/dev/null || { echo "openssl not installed"; exit 77; }

T="$TMPDIR/tls"; mkdir -p "$T"
mk() { # mk NAME CN : a self-signed RSA-2048 certificate valid for localhost and 127.0.0.1
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$2" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$T/$1.key" -out "$T/$1.pem" 2>/dev/null
}
mk server localhost; mk client gyro-client; mk stranger stranger

# TLS: server certificate only
start_server tls --tls-cert "$T/server.pem" --tls-key "$T/server.key"
suite tls "$ADDR" --ca "$T/server.pem"
suite tls "localhost:$PORT" --ca "$T/server.pem"
suite tls "$ADDR" --expect-fail                              # plaintext client on a TLS port
suite tls "$ADDR" --ca "$T/stranger.pem" --expect-fail       # wrong roots
[ "$("$GYRO" client --addr "$ADDR" --tls-ca "$T/server.pem" health)" = SERVING ]
rc=0; "$GYRO" client --addr "$ADDR" --tls-ca "$T/server.pem" --server-name wrong.example --timeout-ms 3000 health 2>/dev/null || rc=$?
[ $rc = 1 ] || { echo "FAIL wrong server name accepted ($rc)"; exit 1; }
rc=0; "$GYRO" client --addr "$ADDR" --timeout-ms 3000 health 2>/dev/null || rc=$?
[ $rc = 1 ] || { echo "FAIL plaintext C client accepted ($rc)"; exit 1; }
echo "ok   C client over TLS; wrong name and plaintext refused"
stop_server

# mutual TLS: the client must present a certificate signed by the client CA
start_server mtls --tls-cert "$T/server.pem" --tls-key "$T/server.key" --tls-client-ca "$T/client.pem"
suite tls "$ADDR" --ca "$T/server.pem" --cert "$T/client.pem" --key "$T/client.key"
suite tls "$ADDR" --ca "$T/server.pem" --expect-fail                                            # no client cert
suite tls "$ADDR" --ca "$T/server.pem" --cert "$T/stranger.pem" --key "$T/stranger.key" --expect-fail
[ "$("$GYRO" client --addr "$ADDR" --tls-ca "$T/server.pem" --tls-cert "$T/client.pem" --tls-key "$T/client.key" health)" = SERVING ]
rc=0; "$GYRO" client --addr "$ADDR" --tls-ca "$T/server.pem" --timeout-ms 3000 health 2>/dev/null || rc=$?
[ $rc = 1 ] || { echo "FAIL C client without certificate accepted ($rc)"; exit 1; }
echo "ok   mutual TLS: C client with certificate accepted, without refused"
stop_server

# unusable key material: refuse to start (exit 1), never crash
printf 'not a key\n' > "$T/bad.key"
rc=0; timeout 20 "$GYRO" serve --addr 127.0.0.1:0 --tls-cert "$T/server.pem" --tls-key "$T/bad.key" 2>"$TMPDIR/bad.log" || rc=$?
[ $rc = 1 ] || { echo "FAIL bad key: exit $rc"; cat "$TMPDIR/bad.log"; exit 1; }
rc=0; "$GYRO" serve --addr 127.0.0.1:0 --tls-cert "$T/nope.pem" --tls-key "$T/server.key" 2>/dev/null || rc=$?
[ $rc = 1 ] || { echo "FAIL missing cert file: exit $rc"; exit 1; }
echo "ok   bad key and missing certificate refused"
