"""gyro.errors — the exceptions of the gyro package.

Every exception gyro raises on bad data or a failed call derives from GyroError:

    GyroError
    ├── StreamError (also a ValueError)     a gyro stream that cannot be read or written
    │   ├── StreamFormatError                garbage, a record that does not unpack, no header,
    │   │   └── TruncatedStreamError         a stream that ends inside a length prefix or a body
    │   ├── RecordTooLargeError              a length prefix (or a record to write) over the limit
    │   └── StreamVersionError               a stream of a newer format version
    └── RpcError                             a gRPC call that did not end with OK
        ├── InvalidArgument, NotFound, Unavailable, DeadlineExceeded, ...   one per status code

StreamError messages follow the C reader (pipeline/stream.c) word for word, so a stream refused
by `gyro dump` and by Python reads the same:

    in.pb: record 3 at byte 1187: truncated: length prefix says 52 bytes, 17 remain

The header is record 0; `record` and `offset` are also attributes. Usage mistakes (a message of
the wrong type for a stream, a bad argument) raise TypeError or ValueError, not GyroError.
"""
import grpc

__all__ = ["GyroError", "StreamError", "StreamFormatError", "TruncatedStreamError", "RecordTooLargeError",
           "StreamVersionError", "RpcError", "Cancelled", "Unknown", "InvalidArgument", "DeadlineExceeded",
           "NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
           "Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"]


class GyroError(Exception):
    """Base class of every error gyro raises for bad data or a failed call."""


class StreamError(GyroError, ValueError):
    """A gyro stream that cannot be read or written.

    Attributes: name (the stream's name: its path, "-", or "<bytes>"), record (1-based number of
    the record, 0 for the header), offset (byte offset of the record's length prefix from the
    start of the stream) and reason (the message without the location)."""

    def __init__(self, name, record, offset, reason):
        self.name = name
        self.record = record
        self.offset = offset
        self.reason = reason
        super().__init__("%s: record %d at byte %d: %s" % (name, record, offset, reason))


class StreamFormatError(StreamError):
    """Garbage or a malformed record: a malformed length prefix, a record that does not unpack
    as the stream's type, no StreamHeader, a header naming another type than expected."""


class TruncatedStreamError(StreamFormatError):
    """The stream ends inside a length prefix or inside a record's body."""


class RecordTooLargeError(StreamError):
    """A length prefix above the reader's limit, or a message too large for the writer's limit
    (nothing is written then, and the stream stays valid)."""


class StreamVersionError(StreamError):
    """The stream's header has a format version newer than this package reads."""


class RpcError(GyroError):
    """A gRPC call of gyro.Client that ended with a status other than OK.

    Attributes: code (grpc.StatusCode), details (the server's message, may be empty) and method
    (e.g. "/gyro.v1.Gyro/Classify"). The grpc.RpcError is chained as __cause__. The subclass
    tells the code: `except gyro.Unavailable` catches a server that is down or has no model."""

    def __init__(self, code, details, method):
        self.code = code
        self.details = details or ""
        self.method = method
        super().__init__("%s: %s%s" % (method, code.name, ": " + self.details if self.details else ""))


class Cancelled(RpcError):
    """CANCELLED: the call was cancelled (by the client, or by a server shutting down)."""


class Unknown(RpcError):
    """UNKNOWN."""


class InvalidArgument(RpcError):
    """INVALID_ARGUMENT: a request gyro refuses (empty text, invalid UTF-8, unknown environment)."""


class DeadlineExceeded(RpcError):
    """DEADLINE_EXCEEDED: the call's timeout passed."""


class NotFound(RpcError):
    """NOT_FOUND: an unknown character (Neighbors) or health service name."""


class AlreadyExists(RpcError):
    """ALREADY_EXISTS."""


class PermissionDenied(RpcError):
    """PERMISSION_DENIED."""


class ResourceExhausted(RpcError):
    """RESOURCE_EXHAUSTED: a request over the server's --max-request-bytes, or a busy server."""


class FailedPrecondition(RpcError):
    """FAILED_PRECONDITION: a request the loaded model cannot answer (e.g. a EUCLIDEAN Embed from
    a hyperbolic table, a Reason environment other than the policy's)."""


class Aborted(RpcError):
    """ABORTED."""


class OutOfRange(RpcError):
    """OUT_OF_RANGE."""


class Unimplemented(RpcError):
    """UNIMPLEMENTED: a method the server does not serve."""


class Internal(RpcError):
    """INTERNAL."""


class Unavailable(RpcError):
    """UNAVAILABLE: no server at the address, or no model/table/policy loaded for the method."""


class DataLoss(RpcError):
    """DATA_LOSS."""


class Unauthenticated(RpcError):
    """UNAUTHENTICATED."""


_BY_CODE = {
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.UNKNOWN: Unknown,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.ABORTED: Aborted,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRange,
    grpc.StatusCode.UNIMPLEMENTED: Unimplemented,
    grpc.StatusCode.INTERNAL: Internal,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DATA_LOSS: DataLoss,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
}


def rpc_error(code, details, method):
    """The RpcError subclass instance for a grpc.StatusCode (RpcError itself for a code without
    a subclass)."""
    return _BY_CODE.get(code, RpcError)(code, details, method)
