"""reflection_client.py — call `gyro serve` knowing only its address, through gRPC server
reflection (grpc.reflection.v1alpha), with Debian's python3-grpcio and python3-protobuf.

    reflection_client.py GEN ADDR TEXT [v1alpha|v1]

GEN holds reflection_pb2/_grpc and reflection_v1_pb2/_grpc generated from proto/reflection.proto
and proto/reflection_v1.proto (the only stubs used: no gyro_pb2 is imported); the last argument
picks the protocol version (default v1alpha). The script lists the services, fetches the file that declares each one
(with its imports) into an empty descriptor pool, builds the request and response classes of
gyro.v1.Gyro/Classify with protobuf's message factory and calls Classify on TEXT; then checks
the protocol's other requests and its errors (which come back as ErrorResponse messages on the
same stream). One line per assertion; exit 1 at the first failure.
"""
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402

VERSION = sys.argv[4] if len(sys.argv) > 4 else "v1alpha"
if VERSION == "v1":
    import reflection_v1_pb2 as rpb  # noqa: E402
    import reflection_v1_pb2_grpc as rgrpc  # noqa: E402
else:
    import reflection_pb2 as rpb  # noqa: E402
    import reflection_pb2_grpc as rgrpc  # noqa: E402

ADDR, TEXT = sys.argv[2], sys.argv[3]
NOT_FOUND, UNIMPLEMENTED = grpc.StatusCode.NOT_FOUND.value[0], grpc.StatusCode.UNIMPLEMENTED.value[0]


def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def ask(stub, requests):
    """Send the requests on one ServerReflectionInfo stream; the responses, in order."""
    return list(stub.ServerReflectionInfo(iter(requests), timeout=10))


def message_class(pool, name):
    desc = pool.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def add_files(pool, blobs, added):
    """Add serialized FileDescriptorProtos to the pool, imports first."""
    protos = {}
    for b in blobs:
        fd = descriptor_pb2.FileDescriptorProto.FromString(b)
        protos[fd.name] = fd

    def add(name):
        if name in added:
            return
        fd = protos[name]
        for dep in fd.dependency:
            add(dep)
        pool.Add(fd)
        added.add(name)

    for name in protos:
        add(name)


def main():
    channel = grpc.insecure_channel(ADDR)
    stub = rgrpc.ServerReflectionStub(channel)

    # list the services
    [r] = ask(stub, [rpb.ServerReflectionRequest(host="h", list_services="")])
    services = sorted(s.name for s in r.list_services_response.service)
    print("services: %s" % " ".join(services), flush=True)
    ok(services == ["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                    "grpc.reflection.v1alpha.ServerReflection", "gyro.v1.Gyro"],
       "%s: list_services names gyro.v1.Gyro, Health and ServerReflection v1 and v1alpha" % VERSION)
    ok(r.valid_host == "h" and r.original_request.HasField("list_services"), "the response echoes host and request")

    # each service's file (and imports) into an empty pool, on one stream
    pool, added = descriptor_pool.DescriptorPool(), set()
    rs = ask(stub, [rpb.ServerReflectionRequest(file_containing_symbol=s) for s in services])
    ok(len(rs) == len(services), "one response per request on one stream")
    for s, r in zip(services, rs):
        ok(r.WhichOneof("message_response") == "file_descriptor_response", "file_containing_symbol %s" % s)
        add_files(pool, r.file_descriptor_response.file_descriptor_proto, added)
    gyro = pool.FindServiceByName("gyro.v1.Gyro")
    methods = sorted(m.name for m in gyro.methods)
    print("gyro.v1.Gyro methods: %s" % " ".join(methods), flush=True)
    ok("Classify" in methods and "Stats" in methods, "the reflected gyro.v1.Gyro has Classify and Stats")

    # call Classify with classes built from the reflected descriptors only
    m = gyro.methods_by_name["Classify"]
    Req, Resp = message_class(pool, m.input_type.full_name), message_class(pool, m.output_type.full_name)
    call = channel.unary_unary("/%s/%s" % (gyro.full_name, m.name), request_serializer=Req.SerializeToString,
                               response_deserializer=Resp.FromString)
    reply = call(Req(text=TEXT, top_k=3, id="r1"), timeout=10)
    print("Classify %s -> %s (model %s)" % (TEXT, ", ".join("%s %.3f" % (i.label, i.probability) for i in reply.intents),
                                            reply.model_version), flush=True)
    ok(len(reply.intents) == 3 and reply.id == "r1" and reply.model_version,
       "Classify through reflected descriptors answers 3 intents, the id and the model version")
    probs = [i.probability for i in reply.intents]
    ok(probs == sorted(probs, reverse=True) and all(0 <= p <= 1 for p in probs), "probabilities in [0,1], descending")

    # the other lookups
    sym = {"gyro.v1.Gyro.Classify": "gyro.proto", ".gyro.v1.ClassifyRequest": "gyro.proto",
           "gyro.v1.ClassifyRequest.text": "gyro.proto",
           "grpc.health.v1.HealthCheckResponse.ServingStatus": "health.proto",
           "grpc.health.v1.HealthCheckResponse.SERVING": "health.proto",
           "grpc.reflection.v1alpha.ServerReflectionRequest.message_request": "reflection.proto",
           "grpc.reflection.v1.ServerReflection.ServerReflectionInfo": "reflection_v1.proto"}
    rs = ask(stub, [rpb.ServerReflectionRequest(file_containing_symbol=s) for s in sym])
    for (s, want), r in zip(sym.items(), rs):
        got = [descriptor_pb2.FileDescriptorProto.FromString(b).name
               for b in r.file_descriptor_response.file_descriptor_proto]
        ok(got[:1] == [want], "symbol %s is in %s (%s)" % (s, want, got))
    [r] = ask(stub, [rpb.ServerReflectionRequest(file_by_filename="gyro.proto")])
    got = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in r.file_descriptor_response.file_descriptor_proto]
    ok([f.name for f in got][:1] == ["gyro.proto"] and got[0].package == "gyro.v1", "file_by_filename gyro.proto")
    [r] = ask(stub, [rpb.ServerReflectionRequest(all_extension_numbers_of_type="gyro.v1.ClassifyRequest")])
    ok(r.all_extension_numbers_response.base_type_name == "gyro.v1.ClassifyRequest"
       and not r.all_extension_numbers_response.extension_number, "all_extension_numbers_of_type: none")

    # errors: in an ErrorResponse, the stream goes on
    bad = [rpb.ServerReflectionRequest(file_by_filename="nope.proto"),
           rpb.ServerReflectionRequest(file_containing_symbol="gyro.v1.Nope"),
           rpb.ServerReflectionRequest(file_containing_symbol="gyro.v1"[:-1]),
           rpb.ServerReflectionRequest(file_containing_extension=rpb.ExtensionRequest(
               containing_type="gyro.v1.ClassifyRequest", extension_number=100)),
           rpb.ServerReflectionRequest(all_extension_numbers_of_type="gyro.v1.Gyro"),
           rpb.ServerReflectionRequest(host="only a host"),
           rpb.ServerReflectionRequest(list_services="*")]
    rs = ask(stub, bad)
    ok(len(rs) == len(bad), "one response per request, errors included (%d)" % len(rs))
    codes = [r.error_response.error_code if r.HasField("error_response") else 0 for r in rs]
    ok(codes == [NOT_FOUND] * 5 + [UNIMPLEMENTED, 0], "NOT_FOUND x5, UNIMPLEMENTED for an empty request, "
       "then list_services still answered (%s)" % codes)
    ok(all(r.error_response.error_message for r in rs[:6]), "every error says what was not found")
    # bytes that are not a ServerReflectionRequest end the stream INVALID_ARGUMENT
    raw = channel.stream_stream("/grpc.reflection.%s.ServerReflection/ServerReflectionInfo" % VERSION)
    try:
        list(raw(iter([b"\xff\xff\xff"]), timeout=10))
        code = grpc.StatusCode.OK
    except grpc.RpcError as e:
        code = e.code()
    ok(code == grpc.StatusCode.INVALID_ARGUMENT, "a malformed request is INVALID_ARGUMENT (%s)" % code)
    channel.close()


if __name__ == "__main__":
    main()
