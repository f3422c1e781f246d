"""gyro.client — a client of `gyro serve` over grpcio, with the generated stubs.

    import gyro
    client = gyro.Client("127.0.0.1:50051")
    reply = client.classify("播放周杰伦的稻香")
    for intent in reply.intents:
        print(intent.label, round(intent.probability, 3))

One method per RPC of gyro.v1.Gyro (Classify, ClassifyStream, Normalize, Embed, Neighbors,
Reason, Stats, TrainClassifier, TrainEmbeddings) and grpc.health.v1.Health (Check: health(), Watch: watch_health()); each returns
the response message (streaming methods: an iterator of messages); model_version() names the
served model. A call that does not end with OK raises a
gyro.errors.RpcError subclass named after its status code (gyro.Unavailable,
gyro.InvalidArgument, gyro.DeadlineExceeded, ...) with .code, .details and .method; for a
streaming method the error is raised while iterating. Every call has a deadline: the client's
`timeout` (default 10 s, as `gyro client --timeout-ms`) unless the call gives its own;
timeout=None means no deadline.

TLS: give `root_certificates` (PEM bytes, or a path) to verify the server (tls=True alone
uses the system's roots), plus `private_key` and `certificate_chain` for mutual TLS;
`server_name` overrides the name checked in the server's certificate. Plaintext otherwise.

Several replicas, balanced by the client: a target naming several addresses
("ipv4:10.0.0.1:50051,10.0.0.2:50051", or "dns:///gyro.example:50051" for a DNS name with
several A records) and lb_policy="round_robin" spread calls over all of them (grpcio's default,
pick_first, sends every call to the first address that connects); health_check=True also
watches each replica's grpc.health.v1 status and skips those not SERVING (a replica draining
before shutdown), as the service config's healthCheckConfig does.

The underlying objects are public for anything this class does not wrap: `channel`, `stub`
(gyro_pb2_grpc.GyroStub) and `health_stub` (health_pb2_grpc.HealthStub). A Client is
thread-safe (grpcio channels are); close it, or use it as a context manager.
"""
import json
import os

import grpc

from . import gyro_pb2, gyro_pb2_grpc, health_pb2, health_pb2_grpc
from .errors import rpc_error

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 10.0
_CLIENT_DEFAULT = object()  # "use the client's timeout"

_MODELS = {"poincare": gyro_pb2.POINCARE, "hyperboloid": gyro_pb2.HYPERBOLOID,
           "euclidean": gyro_pb2.EUCLIDEAN, "unspecified": gyro_pb2.EMBEDDING_MODEL_UNSPECIFIED}


def _pem(value, what):
    """PEM bytes from bytes, a PEM string, or a path; None stays None."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str) and value.lstrip().startswith("-----BEGIN"):
        return value.encode("ascii")
    if isinstance(value, (str, os.PathLike)):
        with open(value, "rb") as f:
            return f.read()
    raise TypeError("%s: expected PEM bytes or a path, got %r" % (what, value))


def service_config(lb_policy=None, health_check=False):
    """The JSON service config of a channel for lb_policy (a grpcio load-balancing policy such
    as "round_robin" or "pick_first") and, with health_check, client-side health checking of
    the whole server (grpc.health.v1 Watch, service ""); None when neither is asked for."""
    config = {}
    if lb_policy:
        config["loadBalancingConfig"] = [{lb_policy: {}}]
    if health_check:
        config["healthCheckConfig"] = {"serviceName": ""}
    return json.dumps(config) if config else None


def _model(model):
    if isinstance(model, str):
        try:
            return _MODELS[model.lower()]
        except KeyError:
            raise ValueError("unknown embedding model %r (poincare, hyperboloid, euclidean)" % model) from None
    return model


class Client:
    """A connection to `gyro serve`.

    Client(target="127.0.0.1:50051", timeout=10.0, tls=False, root_certificates=None,
           private_key=None, certificate_chain=None, server_name=None, options=(),
           max_message_bytes=64 MiB, channel=None, lb_policy=None, health_check=False)

    `target` is host:port (any grpcio target). `options` are extra grpcio channel options
    (name, value) pairs. `channel`: use this grpc.Channel instead of making one (target and the
    TLS arguments are then ignored; close() still closes it). Making a Client does not connect;
    the first call (or wait_ready) does. `lb_policy` ("round_robin") and `health_check` set the
    channel's service config (see service_config; ValueError if `options` also has
    "grpc.service_config").
    """

    def __init__(self, target=DEFAULT_TARGET, timeout=DEFAULT_TIMEOUT, tls=False, root_certificates=None,
                 private_key=None, certificate_chain=None, server_name=None, options=(),
                 max_message_bytes=64 << 20, channel=None, lb_policy=None, health_check=False):
        self.target = target
        self.timeout = timeout
        if channel is None:
            opts = [("grpc.max_send_message_length", max_message_bytes),
                    ("grpc.max_receive_message_length", max_message_bytes)]
            if server_name:
                opts.append(("grpc.ssl_target_name_override", server_name))
            opts += list(options)
            config = service_config(lb_policy, health_check)
            if config:
                if any(name == "grpc.service_config" for name, _ in opts):
                    raise ValueError("lb_policy/health_check and a grpc.service_config option: give one")
                opts.append(("grpc.service_config", config))
            key = _pem(private_key, "private_key")
            chain = _pem(certificate_chain, "certificate_chain")
            if (key is None) != (chain is None):
                raise ValueError("mutual TLS needs both private_key and certificate_chain")
            if tls or root_certificates is not None or key is not None:
                creds = grpc.ssl_channel_credentials(root_certificates=_pem(root_certificates, "root_certificates"),
                                                     private_key=key, certificate_chain=chain)
                channel = grpc.secure_channel(target, creds, options=opts)
            else:
                channel = grpc.insecure_channel(target, options=opts)
        self.channel = channel
        self.stub = gyro_pb2_grpc.GyroStub(channel)
        self.health_stub = health_pb2_grpc.HealthStub(channel)

    # -- plumbing -------------------------------------------------------------------------------
    def _timeout(self, timeout):
        return self.timeout if timeout is _CLIENT_DEFAULT else timeout

    def _unary(self, method, fn, request, timeout):
        try:
            return fn(request, timeout=self._timeout(timeout))
        except grpc.RpcError as e:
            raise rpc_error(e.code(), e.details(), method) from e

    @staticmethod
    def _stream(method, call):
        """Iterate over a streaming call, translating its error; closing the iterator early
        cancels the call."""
        try:
            for item in call:
                yield item
        except grpc.RpcError as e:
            raise rpc_error(e.code(), e.details(), method) from e
        finally:
            call.cancel()

    # -- gyro.v1.Gyro ---------------------------------------------------------------------------
    def classify(self, text, top_k=0, id="", timeout=_CLIENT_DEFAULT, previous_turn=""):
        """Classify one utterance: a gyro_pb2.ClassifyResponse with the top_k intents (0: the
        server's default, 5), most probable first, the model version and the normalized text.
        previous_turn: the utterance said just before in the dialogue (models trained with
        --context read it). Raises Unavailable without a model, InvalidArgument for an empty
        text."""
        req = gyro_pb2.ClassifyRequest(text=text, top_k=top_k, id=id, previous_turn=previous_turn)
        return self._unary("/gyro.v1.Gyro/Classify", self.stub.Classify, req, timeout)

    def classify_stream(self, texts, top_k=0, timeout=_CLIENT_DEFAULT):
        """Classify many utterances over one ClassifyStream call: an iterator of
        ClassifyResponse, one per input, in order. `texts` is an iterable of strings (sent with
        id = their 0-based position) or of ClassifyRequest messages (sent as they are); it is
        consumed as the call proceeds, so it may be a generator. The timeout bounds the whole
        stream."""
        def requests():
            for k, t in enumerate(texts):
                yield t if isinstance(t, gyro_pb2.ClassifyRequest) else \
                    gyro_pb2.ClassifyRequest(text=t, top_k=top_k, id=str(k))
        call = self.stub.ClassifyStream(requests(), timeout=self._timeout(timeout))
        return self._stream("/gyro.v1.Gyro/ClassifyStream", call)

    def normalize(self, text, keep_traditional=False, case_fold=False, paragraphs=False, source="",
                  timeout=_CLIENT_DEFAULT):
        """Normalize text as `gyro normalize` does: an iterator of gyro_pb2.Document, one per
        line (paragraphs=True: per blank-line-separated paragraph)."""
        req = gyro_pb2.NormalizeRequest(text=text, keep_traditional=keep_traditional, case_fold=case_fold,
                                        paragraphs=paragraphs, source=source)
        call = self.stub.Normalize(req, timeout=self._timeout(timeout))
        return self._stream("/gyro.v1.Gyro/Normalize", call)

    def embed(self, tokens=(), text="", model="poincare", timeout=_CLIENT_DEFAULT):
        """Vectors of characters from the server's table: `tokens` (a list of characters) or
        `text` (normalized and segmented by the server). `model`: "poincare" (default) or
        "hyperboloid" (or a gyro_pb2.EmbeddingModel value). A gyro_pb2.EmbedResponse; tokens
        not in the table are listed in `missing`. Raises Unavailable without --embeddings."""
        req = gyro_pb2.EmbedRequest(tokens=list(tokens), text=text, model=_model(model))
        return self._unary("/gyro.v1.Gyro/Embed", self.stub.Embed, req, timeout)

    def neighbors(self, token, k=0, timeout=_CLIENT_DEFAULT):
        """The k nearest characters of `token` by hyperbolic distance (k 0: 10), a
        gyro_pb2.NeighborsResponse. Raises NotFound for a character not in the table."""
        req = gyro_pb2.NeighborsRequest(token=token, k=k)
        return self._unary("/gyro.v1.Gyro/Neighbors", self.stub.Neighbors, req, timeout)

    def reason(self, input="", environment="", max_steps=0, seed=0, sample=False, timeout=_CLIENT_DEFAULT):
        """One episode of the server's reasoning policy from `input`: a gyro_pb2.ReasonResponse
        with its steps, total reward and answer. environment "composite" runs the
        composite-intent policy on an utterance; "" the policy's own environment."""
        req = gyro_pb2.ReasonRequest(environment=environment, input=input, max_steps=max_steps,
                                     seed=seed, sample=sample)
        return self._unary("/gyro.v1.Gyro/Reason", self.stub.Reason, req, timeout)

    def stats(self, timeout=_CLIENT_DEFAULT):
        """The server's counters: a gyro_pb2.StatsResponse (calls per method and status code,
        the latency histogram, uptime, model version)."""
        return self._unary("/gyro.v1.Gyro/Stats", self.stub.Stats, gyro_pb2.StatsRequest(), timeout)

    # -- training (gyro serve --train-dir) -----------------------------------------------------------
    def train_classifier(self, examples=(), data_path="", output="", geometry="", arch="", dim=0, epochs=0,
                         lr=0.0, seed=0, embeddings_path="", timeout=None):
        """Train an intent classifier on the server, which then serves it: an iterator of
        gyro_pb2.TrainingProgress (stage "classify", epoch, fraction, loss, learning_rate, rate,
        elapsed_seconds) while it trains, the last one with done=True, output_path (the model
        file under the server's --train-dir) and model_version (what Classify now answers with).

        `examples`: gyro_pb2.Example messages or (text, label) / (text, label, session) tuples,
        sent in the request; or `data_path`, a file under the server's --train-dir (Example
        stream, TSV or fastText text). `output`: the model's file name there ("": one from the
        time). geometry "hyperbolic" (default) / "euclidean" / "lorentz"; arch "ngrams" /
        "transformer"; dim, epochs, lr, seed 0: defaults; `embeddings_path`: a table under
        --train-dir to start from (train_embeddings' output_path). The server bounds epochs,
        dim, data and time (gyro serve --train-max-*).

        Errors (raised while iterating): ResourceExhausted while another training runs,
        InvalidArgument for empty or malformed data, options over the limits or a path with
        '..', PermissionDenied for a path that resolves outside --train-dir, NotFound,
        Unavailable without --train-dir, DeadlineExceeded past --train-max-seconds. Closing the
        iterator (or leaving the for loop) cancels the call: the training stops, nothing is
        written and the old model keeps serving. timeout=None (the default here): no deadline.
        """
        msgs = []
        for e in examples:
            if isinstance(e, gyro_pb2.Example):
                msgs.append(e)
            else:
                e = tuple(e)
                msgs.append(gyro_pb2.Example(text=e[0], label=e[1], session=e[2] if len(e) > 2 else ""))
        req = gyro_pb2.TrainClassifierRequest(examples=msgs, data_path=data_path, output=output, geometry=geometry,
                                              arch=arch, dim=dim, epochs=epochs, lr=lr, seed=seed,
                                              embeddings_path=embeddings_path)
        call = self.stub.TrainClassifier(req, timeout=self._timeout(timeout))
        return self._stream("/gyro.v1.Gyro/TrainClassifier", call)

    def train_embeddings(self, documents=(), corpus_path="", output="", dim=0, epochs=0, window=0, negatives=0,
                         min_count=0, seed=0, euclidean=False, timeout=None):
        """Train character embeddings (char2vec) on the server: an iterator of
        gyro_pb2.TrainingProgress (stage "char2vec"), the last one with done=True and
        output_path, the table written under the server's --train-dir (give it to
        train_classifier as embeddings_path, or to `gyro serve --embeddings`).

        `documents`: strings (one document each, normalized by the server as `gyro char2vec
        train` normalizes text) or gyro_pb2.Document messages (e.g. from gyro.read_documents);
        or `corpus_path`, a text file or Document stream under --train-dir. dim (100), epochs
        (5), window (5), negatives (5), min_count (1), seed (1): 0 means the default;
        euclidean=True trains word2vec's skip-gram instead of the hyperboloid. Errors and
        cancellation as train_classifier."""
        docs = [d if isinstance(d, gyro_pb2.Document) else gyro_pb2.Document(text=d) for d in documents]
        req = gyro_pb2.TrainEmbeddingsRequest(documents=docs, corpus_path=corpus_path, output=output, dim=dim,
                                              epochs=epochs, window=window, negatives=negatives,
                                              min_count=min_count, seed=seed, euclidean=euclidean)
        call = self.stub.TrainEmbeddings(req, timeout=self._timeout(timeout))
        return self._stream("/gyro.v1.Gyro/TrainEmbeddings", call)

    # -- grpc.health.v1.Health ------------------------------------------------------------------
    def health(self, service="", timeout=_CLIENT_DEFAULT):
        """grpc.health.v1.Health/Check: the status name, "SERVING" or "NOT_SERVING" (while the
        server drains). service "" is the server, "gyro.v1.Gyro" the service; an unknown
        service raises NotFound."""
        r = self._unary("/grpc.health.v1.Health/Check", self.health_stub.Check,
                        health_pb2.HealthCheckRequest(service=service), timeout)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)

    def watch_health(self, service="", timeout=None):
        """grpc.health.v1.Health/Watch: an iterator of status names, the current one at once
        ("SERVING"), then one each time it changes ("NOT_SERVING" when the server begins to
        drain before shutdown); an unknown service yields "SERVICE_UNKNOWN" and stays open. The
        stream ends with gyro.Unavailable when the server shuts down; timeout=None (the default
        here) means no deadline. Closing the iterator (or leaving a for loop) cancels the
        call."""
        call = self.health_stub.Watch(health_pb2.HealthCheckRequest(service=service), timeout=self._timeout(timeout))
        for r in self._stream("/grpc.health.v1.Health/Watch", call):
            yield health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)

    def model_version(self, timeout=_CLIENT_DEFAULT):
        """The version of the intent classifier being served ("" without --model): the
        architecture, size and checksum of the model file, as every ClassifyResponse names it;
        it changes when a SIGHUP loads another file."""
        return self.stats(timeout=timeout).model_version

    # -- connection -----------------------------------------------------------------------------
    def wait_ready(self, timeout=_CLIENT_DEFAULT):
        """Block until the channel is connected; gyro.Unavailable if it is not within the
        timeout (e.g. right after starting a server)."""
        t = self._timeout(timeout)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=t)
        except grpc.FutureTimeoutError:
            raise rpc_error(grpc.StatusCode.UNAVAILABLE, "not connected to %s within %s s" % (self.target, t),
                            "(connect)") from None

    def close(self):
        """Close the channel; calls in flight are cancelled. Idempotent."""
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "gyro.Client(%r)" % self.target
