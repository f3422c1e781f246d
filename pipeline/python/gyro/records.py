"""gyro.records — Example and Document streams as Python objects, and back.

The records are the generated messages themselves (gyro.Example, gyro.Document): attribute
access, `==`, and `to_dict()` for pandas or JSON. This module adds:

- read_examples / read_documents: iterate over a stream, checking it holds that type;
- example(text, label, ...): an Example whose `labels` are the label's atoms as gyro import
  computes them (pipeline/labels.h: whitespace around the label and its atoms dropped, atoms
  sorted bytewise and deduplicated), with parse_label() exposing the rule;
- write_examples / write_documents: write Examples from messages, dicts, or (text, label)
  tuples, and Documents from messages or dicts;
- to_dict / from_dict / to_json: protobuf's JSON mapping with the .proto field names, the form
  `gyro dump` prints (uint64 as strings, enums by name, NaN as "NaN").
"""
import json

from google.protobuf import json_format

from . import messages
from .stream import read_stream, write_stream

Example = messages.gyro_pb2.Example
Document = messages.gyro_pb2.Document

_ASCII_SPACE = " \t\r\n\v\f"
_INVISIBLE = {0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF} | set(range(0x2000, 0x2010))
MAX_LABEL_BYTES = 1024
MAX_ATOMS = 32
MAX_DEPTH = 16


def parse_label(label):
    """(name, atoms) of an intent label, by the rules of gyro's label parser (labels.h): the
    label as written with whitespace around it and around each '+'-joined atom removed, and its
    atoms sorted bytewise and deduplicated. "query_song + play_song" gives
    ("query_song+play_song", ["play_song", "query_song"]). ValueError for an empty label, atom
    or '.'-level, whitespace, a control or an invisible character inside an atom, or a label
    over gyro's limits (1024 bytes, 32 atoms, 16 levels)."""
    text = label.strip(_ASCII_SPACE)
    if not text:
        raise ValueError("empty label")
    if len(text.encode("utf-8")) > MAX_LABEL_BYTES:
        raise ValueError("label of %d bytes (limit %d)" % (len(text.encode("utf-8")), MAX_LABEL_BYTES))
    atoms = [a.strip(_ASCII_SPACE) for a in text.split("+")]
    if len(atoms) > MAX_ATOMS:
        raise ValueError("more than %d atoms in %r" % (MAX_ATOMS, text))
    for a in atoms:
        if not a:
            raise ValueError("empty atom in %r" % text)
        levels = a.split(".")
        if any(not lv for lv in levels):
            raise ValueError("empty level in %r" % text)
        if len(levels) > MAX_DEPTH:
            raise ValueError("more than %d levels in %r" % (MAX_DEPTH, text))
        for ch in a:
            cp = ord(ch)
            if cp < 0x20 or cp == 0x7F or 0x80 <= cp <= 0x9F or ch in _ASCII_SPACE:
                raise ValueError("whitespace or control character U+%04X in label %r" % (cp, text))
            if cp in _INVISIBLE:
                raise ValueError("space or invisible character U+%04X in label %r" % (cp, text))
            if 0xD800 <= cp <= 0xDFFF:
                raise ValueError("surrogate U+%04X in label %r" % (cp, text))
    return "+".join(atoms), sorted(set(atoms), key=lambda s: s.encode("utf-8"))


def example(text, label, source="", session="", line=0):
    """A gyro.Example with `label` normalized and `labels` its atoms (parse_label)."""
    name, atoms = parse_label(label)
    return Example(text=text, label=name, labels=atoms, source=source, session=session, line=line)


def _as_example(item, line):
    if isinstance(item, Example):
        return item
    if isinstance(item, dict):
        d = dict(item)
        if "label" in d and "labels" not in d:
            return example(d.pop("text", ""), d.pop("label"), **d)
        return from_dict(Example, d)
    if isinstance(item, (tuple, list)) and 2 <= len(item) <= 4:
        text, label = item[0], item[1]
        return example(text, label, source=item[2] if len(item) > 2 else "",
                       session=item[3] if len(item) > 3 else "", line=line)
    raise TypeError("an Example is written from a gyro.Example, a dict or a (text, label[, source[, "
                    "session]]) tuple, not %r" % (item,))


def write_examples(target, items, producer=None, header=True):
    """Write an Example stream to `target` (a path, written atomically, "-" or a binary file)
    from gyro.Example messages, dicts (with "label" and no "labels": labels are computed; else
    taken as they are) or (text, label[, source[, session]]) tuples (line = position, 1-based).
    Returns the number of records. ValueError for a bad label; the file is then not written."""
    gen = (_as_example(item, k) for k, item in enumerate(items, 1))
    return write_stream(target, gen, Example, producer=producer, header=header)


def write_documents(target, items, producer=None, header=True):
    """Write a Document stream from gyro.Document messages or dicts (to_dict's form). Text is
    written as given: Documents made here are not normalized (use Client.normalize or
    `gyro normalize` for that). Returns the number of records."""
    gen = (d if isinstance(d, Document) else from_dict(Document, d) for d in items)
    return write_stream(target, gen, Document, producer=producer, header=header)


def read_examples(source, **kwargs):
    """Iterate over the gyro.Example records of a stream (StreamFormatError if it holds another
    type). kwargs as StreamReader (name, headerless_type, max_record)."""
    return read_stream(source, Example, **kwargs)


def read_documents(source, **kwargs):
    """Iterate over the gyro.Document records of a stream, as read_examples."""
    return read_stream(source, Document, **kwargs)


def to_dict(msg):
    """A message as a dict in protobuf's JSON mapping with the .proto field names, fields at
    their default value omitted: the form of `gyro dump` (uint64 as strings, enums by name)."""
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def from_dict(message_type, d):
    """A message of `message_type` (a class or full name) from a dict in to_dict's form (plain
    ints for uint64 are accepted too). google.protobuf.json_format.ParseError on unknown fields
    or bad values."""
    cls = messages.message_class(message_type) if isinstance(message_type, str) else message_type
    if cls is None:
        raise ValueError("unknown message type %r" % (message_type,))
    return json_format.ParseDict(d, cls())


def to_json(msg):
    """One JSON line for a message, as `gyro dump` prints it (compact, UTF-8 kept)."""
    return json.dumps(to_dict(msg), ensure_ascii=False, separators=(",", ":"))
