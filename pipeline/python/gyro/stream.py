"""gyro.stream — read and write gyro streams.

A gyro stream is protobuf's "delimited" format behind a header (pipeline/stream.h):

    varint(len) StreamHeader  varint(len) record  varint(len) record ...

The StreamHeader is {magic "gyro", version 1, message_type, producer}; every following record
is a message of `message_type` (e.g. "gyro.v1.Document"). Lengths are base-128 varints, least
significant group first (encode_varint/decode_varint below; only protobuf's public API is used:
messages are parsed with FromString and written with SerializeToString).

The reader mirrors the C reader (pipeline/stream.c): it reads through a 64 KiB buffer with
constant memory (one record at a time, grown with the bytes actually read, so a forged length
never allocates it); a truncated prefix or body, a malformed varint, a length above the record
limit (default 64 MiB), a record that does not parse, a missing or foreign header each raise a
gyro.errors.StreamError subclass whose message is the C reader's, with the stream name, record
number (the header is record 0) and byte offset of the record's length prefix. Errors are
sticky: after one, the reader raises the same error again.

The writer checks each message's type and size before writing it (a message over the limit
raises RecordTooLargeError and writes nothing); opened on a path it writes atomically, as gyro
does (a temporary file beside the target, fsynced and renamed at close; removed on error).

Neither object is thread-safe; use one per thread.
"""
import io
import os
import sys
import tempfile

from google.protobuf.message import DecodeError

from . import messages
from .errors import (RecordTooLargeError, StreamFormatError, StreamVersionError,
                     TruncatedStreamError)

MAGIC = "gyro"
VERSION = 1
DEFAULT_MAX_RECORD = 64 << 20
_CHUNK = 64 << 10
_UINT64 = (1 << 64) - 1


# ---- varints -------------------------------------------------------------------------------

def encode_varint(value):
    """Encode a non-negative integer below 2**64 as a protobuf varint (1 to 10 bytes)."""
    if not 0 <= value <= _UINT64:
        raise ValueError("varint out of range: %r" % (value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data, pos=0):
    """Decode the varint at data[pos:]; return (value, position after it). Raises ValueError
    when data ends inside the varint or the varint does not fit 64 bits (the C reader's rules:
    at most 10 bytes, the 10th holding only bit 63)."""
    value = shift = 0
    start = pos
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint at byte %d" % start)
        b = data[pos]
        pos += 1
        if shift == 63 and b & 0x7E:
            raise ValueError("malformed varint at byte %d (over 64 bits)" % start)
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("malformed varint at byte %d (more than 10 bytes)" % start)


# ---- reader --------------------------------------------------------------------------------

def _open_source(source, name):
    """(binary file, name, whether we own the file) for a path, "-", bytes or a file object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(source)), name or "<bytes>", True
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path == "-":
            return sys.stdin.buffer, name or "-", False
        return open(path, "rb"), name or path, True
    if not hasattr(source, "read"):
        raise TypeError("a gyro stream is read from a path, '-', bytes or a binary file, not %r" % (source,))
    if isinstance(source, io.TextIOBase):
        source = source.buffer
    return source, name or getattr(source, "name", None) or "-", False


class StreamReader:
    """Reader of one gyro stream.

    StreamReader(source, name=None, headerless_type=None, max_record=64 MiB)

    `source`: a path ("-" = standard input), bytes, or a binary file object (not closed by the
    reader). `name` is used in error messages (default: the path, "-", or "<bytes>").
    `headerless_type`: None — the stream must start with a StreamHeader; a full name or message
    class — the type to assume when the stream has no header (a stream that has one is still
    accepted and its header checked). The header is read at once: errors in it raise here.

    Attributes: header (a gyro_pb2.StreamHeader; synthesized for a headerless stream, with
    producer ""), message_type (full name of the records), message_class (its generated class,
    None if gyro does not know the type), record (number of the last record returned, 0 before
    the first) and offset (byte offset of its length prefix).

    Iterating gives the records as messages of message_class; read()/read_raw() give one at a
    time. Use as a context manager, or call close(), to close a file the reader opened.
    """

    def __init__(self, source, name=None, headerless_type=None, max_record=DEFAULT_MAX_RECORD):
        if max_record <= 0:
            raise ValueError("max_record must be positive")
        self._f, self.name, self._owns = _open_source(source, name)
        self.max_record = max_record
        self._buf = b""
        self._at = 0            # next unread byte of _buf
        self._pos = 0           # bytes consumed from the stream
        self._failed = None     # sticky StreamError
        self._pending = None    # first record of a headerless stream, already read
        self._checked = None    # full name of the class read() was last asked for
        self.record = 0
        self.offset = 0
        try:
            self._read_header(None if headerless_type is None else messages.full_name(headerless_type))
        except BaseException:
            self.close()
            raise

    # -- raw reading ----------------------------------------------------------------------------
    def _fail(self, cls, record, offset, reason):
        self._failed = cls(self.name, record, offset, reason)
        raise self._failed

    def _getc(self):
        if self._at >= len(self._buf):
            self._buf = self._f.read(_CHUNK) or b""
            self._at = 0
            if not self._buf:
                return -1
        c = self._buf[self._at]
        self._at += 1
        self._pos += 1
        return c

    def _take(self, want):
        """Up to `want` bytes (fewer only at the end of the stream), read in chunks that grow
        with the bytes actually read."""
        have = len(self._buf) - self._at
        if have >= want:
            out = self._buf[self._at:self._at + want]
            self._at += want
            self._pos += want
            return out
        parts = [self._buf[self._at:]]
        got = have
        self._buf, self._at = b"", 0
        while got < want:
            chunk = self._f.read(min(want - got, max(_CHUNK, got)))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        self._pos += got
        return b"".join(parts)

    def _next_record(self, number):
        """The next record's bytes, or None at a clean end. Sets record/offset on success."""
        start = self._pos
        value = shift = nbytes = 0
        while True:
            c = self._getc()
            if c < 0:
                if nbytes == 0:
                    return None
                self._fail(TruncatedStreamError, number, start,
                           "truncated: the stream ends inside a length prefix")
            nbytes += 1
            if shift == 63 and c & 0x7E:
                self._fail(StreamFormatError, number, start, "malformed length prefix (varint over 64 bits)")
            value |= (c & 0x7F) << shift
            if not c & 0x80:
                break
            shift += 7
            if shift > 63:
                self._fail(StreamFormatError, number, start, "malformed length prefix (more than 10 bytes)")
        if value > self.max_record:
            self._fail(RecordTooLargeError, number, start,
                       "length prefix says %d bytes, over the limit of %d bytes" % (value, self.max_record))
        body = self._take(value)
        if len(body) < value:
            self._fail(TruncatedStreamError, number, start,
                       "truncated: length prefix says %d bytes, %d remain" % (value, len(body)))
        self.record, self.offset = number, start
        return body

    def _read_header(self, headerless_type):
        raw = self._next_record(0)
        if raw is None and headerless_type is None:
            self._fail(StreamFormatError, 0, 0, "empty input: no gyro stream header")
        header = None
        if raw is not None:
            try:
                header = messages.gyro_pb2.StreamHeader.FromString(raw)
            except DecodeError:
                header = None
        if header is not None and header.magic == MAGIC:
            self.header = header
            if header.version > VERSION:
                self._fail(StreamVersionError, 0, 0,
                           "stream format version %d is newer than this gyro reads (%d); "
                           "upgrade gyro to read it" % (header.version, VERSION))
            if not header.message_type:
                self._fail(StreamFormatError, 0, 0, "stream header names no message type")
        else:
            if headerless_type is None:
                self._fail(StreamFormatError, 0, 0,
                           "not a gyro stream (no StreamHeader with magic \"gyro\"; "
                           "for a stream without header give its type)")
            self.header = messages.gyro_pb2.StreamHeader(magic=MAGIC, version=VERSION,
                                                         message_type=headerless_type, producer="")
            self._pending = raw
        self.record = self.offset = 0
        self.message_type = self.header.message_type
        self.message_class = messages.message_class(self.message_type)

    # -- public reading -------------------------------------------------------------------------
    def read_raw(self):
        """The next record's bytes, or None at the end of the stream. Raises StreamError
        (TruncatedStreamError, StreamFormatError, RecordTooLargeError) as described above, and
        OSError if the file cannot be read."""
        if self._failed is not None:
            raise self._failed
        if self._pending is not None:
            raw, self._pending = self._pending, None
            self.record, self.offset = 1, 0
            return raw
        return self._next_record(self.record + 1)

    def read(self, message_type=None):
        """The next record as a message, or None at the end of the stream.

        `message_type` (a class or full name) is checked against the header: another type
        raises StreamFormatError ("the stream holds gyro.v1.Document records, expected
        gyro.v1.Example"). Without it the header's type is used, which must be one gyro knows
        (else StreamFormatError; read_raw() still gives the bytes). A record that does not
        parse raises StreamFormatError with its number and offset."""
        if self._failed is not None:
            raise self._failed
        want = self.message_type if message_type is None else messages.full_name(message_type)
        if want != self._checked:
            if want != self.message_type:
                self._fail(StreamFormatError, 0, 0, "the stream holds %s records, expected %s"
                           % (self.message_type, want))
            self._checked = want
        cls = message_type if message_type is not None and not isinstance(message_type, str) \
            else messages.message_class(want)
        if cls is None:
            self._fail(StreamFormatError, 0, 0, "unknown record type %s (gyro knows: %s)"
                       % (want, ", ".join(messages.message_types())))
        raw = self.read_raw()
        if raw is None:
            return None
        try:
            return cls.FromString(raw)
        except DecodeError:
            self._fail(StreamFormatError, self.record, self.offset,
                       "a %d-byte record does not unpack as %s" % (len(raw), want))

    def __iter__(self):
        return self

    def __next__(self):
        m = self.read()
        if m is None:
            raise StopIteration
        return m

    def close(self):
        """Close the file if the reader opened it (a path or bytes). Idempotent."""
        if self._owns and self._f is not None:
            self._f.close()
        self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ---- writer --------------------------------------------------------------------------------

class StreamWriter:
    """Writer of one gyro stream.

    StreamWriter(target, message_type, producer=None, header=True, max_record=64 MiB)

    `target`: a path (written atomically: the file appears complete at close() or not at all;
    "-" = standard output) or a binary file object (not closed by the writer). `message_type`:
    the generated class or full name of the records. `producer` goes into the header (default
    "python gyro VERSION"); header=False writes a headerless stream (readers then need its
    type, e.g. `gyro dump --type gyro.v1.Example`).

    Use as a context manager: on leaving normally the stream is committed (close()); on an
    exception a path target is left unchanged (abort()). `count` is the number of records
    written, the header not counted.
    """

    def __init__(self, target, message_type, producer=None, header=True, max_record=DEFAULT_MAX_RECORD):
        from . import __version__
        self.message_type = messages.full_name(message_type)
        if max_record <= 0:
            raise ValueError("max_record must be positive")
        self.max_record = max_record
        self.count = 0
        self._pos = 0
        self._tmp = self._path = None
        self._owns = False
        if isinstance(target, (str, os.PathLike)):
            path = os.fspath(target)
            if path == "-":
                self._f, self.name = sys.stdout.buffer, "-"
            else:
                d, base = os.path.split(os.path.abspath(path))
                fd, self._tmp = tempfile.mkstemp(prefix=base + ".tmp.", dir=d)
                self._f, self.name, self._path, self._owns = os.fdopen(fd, "wb"), path, path, True
        elif hasattr(target, "write"):
            if isinstance(target, io.TextIOBase):
                target = target.buffer
            self._f, self.name = target, getattr(target, "name", None) or "-"
        else:
            raise TypeError("a gyro stream is written to a path, '-' or a binary file, not %r" % (target,))
        if header:
            h = messages.gyro_pb2.StreamHeader(magic=MAGIC, version=VERSION, message_type=self.message_type,
                                               producer=producer if producer is not None
                                               else "python gyro %s" % __version__)
            try:
                self._put(h, 0)
            except BaseException:
                self.abort()
                raise

    def _put(self, msg, number):
        size = msg.ByteSize()
        if size > self.max_record:
            raise RecordTooLargeError(self.name, number, self._pos,
                                      "a %s record of %d bytes is over the limit of %d bytes"
                                      % (msg.DESCRIPTOR.full_name, size, self.max_record))
        data = encode_varint(size) + msg.SerializeToString()
        self._f.write(data)
        self._pos += len(data)

    def write(self, msg):
        """Append one message. TypeError if it is not of the stream's type; RecordTooLargeError
        (nothing written, the stream stays valid) if it is over the limit; OSError on a write
        failure. The message is not modified."""
        if self._f is None:
            raise ValueError("write to a closed gyro stream")
        name = getattr(getattr(msg, "DESCRIPTOR", None), "full_name", None)
        if name != self.message_type:
            raise TypeError("writing a %s into a stream of %s" % (name or type(msg).__name__, self.message_type))
        self._put(msg, self.count + 1)
        self.count += 1

    def write_all(self, msgs):
        """write() each message of an iterable; returns the number written."""
        n = 0
        for m in msgs:
            self.write(m)
            n += 1
        return n

    def close(self):
        """Flush and commit: for a path, fsync and rename the temporary file onto the target
        (and fsync the directory). On failure the target is left unchanged and OSError raised.
        Idempotent."""
        if self._f is None:
            return
        try:
            self._f.flush()
            if self._tmp is not None:
                os.fsync(self._f.fileno())
                self._f.close()
                self._f = None
                os.replace(self._tmp, self._path)
                self._tmp = None
                dfd = os.open(os.path.dirname(os.path.abspath(self._path)), os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
        except BaseException:
            self.abort()
            raise
        self._f = None

    def abort(self):
        """Stop without committing: a path target is left unchanged (the temporary file is
        removed). Idempotent."""
        if self._owns and self._f is not None:
            try:
                self._f.close()
            except OSError:
                pass
        self._f = None
        if self._tmp is not None:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


# ---- one-call helpers ----------------------------------------------------------------------

def read_stream(source, message_type=None, **kwargs):
    """Iterate over the records of a gyro stream (see StreamReader for `source` and kwargs);
    `message_type`, if given, must match the header's type. The file is closed when the
    iteration ends or the generator is closed."""
    with StreamReader(source, **kwargs) as r:
        while True:
            m = r.read(message_type)
            if m is None:
                return
            yield m


def write_stream(target, msgs, message_type=None, **kwargs):
    """Write the messages of an iterable as one gyro stream to `target` (see StreamWriter; a
    path is written atomically). `message_type` defaults to the type of the first message (an
    empty iterable then needs it). Returns the number of records written."""
    it = iter(msgs)
    first = None
    if message_type is None:
        first = next(it, None)
        if first is None:
            raise TypeError("write_stream: no messages and no message_type")
        message_type = type(first)
    with StreamWriter(target, message_type, **kwargs) as w:
        if first is not None:
            w.write(first)
        w.write_all(it)
    return w.count
