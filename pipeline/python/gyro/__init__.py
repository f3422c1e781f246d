"""gyro — Python access to gyro, Chinese NLU in hyperbolic space.

    gyro.Client            call `gyro serve` (Classify, ClassifyStream, Normalize, Embed,
                           Neighbors, Reason, Stats, health, and training: TrainClassifier,
                           TrainEmbeddings) over gRPC
    gyro.read_stream       iterate over the records of a gyro stream (any record type)
    gyro.write_stream      write messages as a gyro stream (atomically to a path)
    gyro.StreamReader, gyro.StreamWriter        the same, one record at a time
    gyro.read_examples, gyro.write_examples     Example streams (`gyro import`, `classify train`)
    gyro.read_documents, gyro.write_documents   Document streams (`gyro normalize`)
    gyro.example, gyro.parse_label               an Example with its label atoms, as gyro import
    gyro.to_dict, gyro.from_dict, gyro.to_json   messages as `gyro dump` prints them
    gyro.Document, gyro.Example, ...            the message classes of proto/gyro.proto
    gyro.gyro_pb2, gyro.gyro_pb2_grpc, gyro.health_pb2, gyro.health_pb2_grpc
                                                 the modules generated from the .proto files
    gyro.proto_dir()                             where the installed .proto files are

Errors: gyro.GyroError and its subclasses (gyro.errors): StreamError for bad streams (with the
C reader's messages, record number and byte offset), RpcError for failed calls (one subclass
per gRPC status code).
"""
__version__ = "0.1.0"

from . import errors, messages  # noqa: E402  (messages imports the generated modules)
from .messages import gyro_pb2, health_pb2, message_class, message_types, proto_dir  # noqa: E402
from . import gyro_pb2_grpc, health_pb2_grpc  # noqa: E402
from .errors import *  # noqa: E402,F401,F403
from .errors import GyroError, RpcError, StreamError  # noqa: E402
from .stream import (DEFAULT_MAX_RECORD, StreamReader, StreamWriter, decode_varint,  # noqa: E402
                     encode_varint, read_stream, write_stream)
from .records import (example, from_dict, parse_label, read_documents, read_examples,  # noqa: E402
                      to_dict, to_json, write_documents, write_examples)
from .client import Client  # noqa: E402

# the message classes and enum values of gyro.proto at top level: gyro.Example, gyro.POINCARE
for _name in gyro_pb2.DESCRIPTOR.message_types_by_name:
    globals()[_name] = getattr(gyro_pb2, _name)
for _name in gyro_pb2.DESCRIPTOR.enum_types_by_name:
    globals()[_name] = getattr(gyro_pb2, _name)
    for _value in gyro_pb2.DESCRIPTOR.enum_types_by_name[_name].values:
        globals()[_value.name] = _value.number
HealthCheckRequest = health_pb2.HealthCheckRequest
HealthCheckResponse = health_pb2.HealthCheckResponse
del _name, _value

__all__ = (["Client", "StreamReader", "StreamWriter", "read_stream", "write_stream", "encode_varint",
            "decode_varint", "DEFAULT_MAX_RECORD", "read_examples", "write_examples", "read_documents",
            "write_documents", "example", "parse_label", "to_dict", "from_dict", "to_json", "message_class",
            "message_types", "proto_dir", "gyro_pb2", "gyro_pb2_grpc", "health_pb2", "health_pb2_grpc",
            "errors", "messages", "HealthCheckRequest", "HealthCheckResponse"]
           + errors.__all__ + list(gyro_pb2.DESCRIPTOR.message_types_by_name)
           + list(gyro_pb2.DESCRIPTOR.enum_types_by_name)
           + [v.name for e in gyro_pb2.DESCRIPTOR.enum_types_by_name.values() for v in e.values])
