"""gyro.messages — the message classes of proto/gyro.proto and proto/health.proto.

The classes come from gyro_pb2 and health_pb2, generated from the .proto files by
grpc_tools.protoc when the package is built (see setup.py); the .proto files themselves are
installed beside them (proto_dir()). This module maps full names ("gyro.v1.Document") to
classes for the stream reader, which finds a stream's record type in its header.
"""
import os

try:
    from . import gyro_pb2, health_pb2
except ImportError as e:  # running from the source tree, where nothing is generated
    raise ImportError("gyro: the generated modules gyro_pb2/health_pb2 are missing (%s); install the "
                      "package (python3 -m pip install --no-build-isolation ./pipeline/python) "
                      "rather than importing it from the source tree or installing it editable "
                      "(pip install -e), where they do not exist" % e) from e

PACKAGE = gyro_pb2.DESCRIPTOR.package  # "gyro.v1"

_BY_NAME = {}
for _module in (gyro_pb2, health_pb2):
    for _short, _desc in _module.DESCRIPTOR.message_types_by_name.items():
        _BY_NAME[_desc.full_name] = getattr(_module, _short)
del _module, _short, _desc


def message_class(full_name):
    """The generated class of a gyro message by its full name ("gyro.v1.Example",
    "grpc.health.v1.HealthCheckResponse"), or None if gyro does not know the name."""
    return _BY_NAME.get(full_name)


def message_types():
    """Full names of every message of gyro.proto and health.proto, sorted (as `gyro dump
    --types` lists them)."""
    return sorted(_BY_NAME)


def full_name(message_type):
    """The full name of `message_type`: a generated class, a message instance, or a full name
    (returned as is). TypeError for anything else."""
    if isinstance(message_type, str):
        return message_type
    desc = getattr(message_type, "DESCRIPTOR", None)
    name = getattr(desc, "full_name", None)
    if not isinstance(name, str):
        raise TypeError("expected a protobuf message class or a full name, got %r" % (message_type,))
    return name


def proto_dir():
    """Directory of the installed gyro.proto and health.proto (the files these classes were
    generated from), e.g. for grpcurl -import-path or protoc in another language."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "proto")
