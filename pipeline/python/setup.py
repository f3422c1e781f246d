"""setup.py — generates gyro's protobuf and gRPC modules while the package is built.

Everything static is in pyproject.toml; this file only adds two steps to setuptools' build_py:

1. find proto/gyro.proto and proto/health.proto: $GYRO_PROTO_DIR if set, else ../../proto (the
   checkout), else gyro/proto/ of an unpacked sdist (the sdist command copies them there);
2. copy them into the built package as gyro/proto/*.proto (so an installed gyro ships the
   .proto its messages come from, see gyro.proto_dir()) and run grpc_tools.protoc
   (python3-grpc-tools) on them into the built package: gyro/gyro_pb2.py, gyro/gyro_pb2_grpc.py,
   gyro/health_pb2.py, gyro/health_pb2_grpc.py. protoc's gRPC plugin imports the message module
   as a top-level module (`import gyro_pb2 as gyro__pb2`); that one line is rewritten to a
   package-relative import, and the build fails if the line is not found.

Nothing generated is written into the source tree. Inside a checkout, setuptools' scratch
directories go to the checkout's build/python/ (removed by `make clean`) instead of
pipeline/python/build/.
"""
import os
import re
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOS = ("gyro.proto", "health.proto")
CHECKOUT = os.path.normpath(os.path.join(HERE, "..", ".."))


def proto_dir():
    """The directory holding gyro.proto and health.proto, or exit with a message saying where
    it was looked for."""
    tried = []
    env = os.environ.get("GYRO_PROTO_DIR")
    candidates = [env] if env else [os.path.join(CHECKOUT, "proto"), os.path.join(HERE, "gyro", "proto")]
    for d in candidates:
        tried.append(d)
        if all(os.path.isfile(os.path.join(d, p)) for p in PROTOS):
            return d
    sys.exit("gyro: cannot find %s in %s (set GYRO_PROTO_DIR to the directory of gyro.proto)"
             % (" and ".join(PROTOS), ", ".join(tried)))


def protoc(include, out_dir):
    """Run grpc_tools.protoc on PROTOS from `include` into `out_dir`; exit with its message on
    failure (e.g. python3-grpc-tools missing)."""
    try:
        from grpc_tools import protoc as grpc_protoc
    except ImportError as e:
        sys.exit("gyro: generating the protobuf modules needs grpc_tools.protoc "
                 "(Debian: apt-get install python3-grpc-tools python3-pkg-resources): %s" % e)
    args = ["grpc_tools.protoc", "-I" + include, "--python_out=" + out_dir,
            "--grpc_python_out=" + out_dir] + [os.path.join(include, p) for p in PROTOS]
    if grpc_protoc.main(args) != 0:
        sys.exit("gyro: grpc_tools.protoc failed on %s" % include)
    for p in PROTOS:
        stem = p[:-len(".proto")]
        path = os.path.join(out_dir, stem + "_pb2_grpc.py")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        pattern = r"^import %s_pb2 as (\w+)$" % stem
        text, n = re.subn(pattern, r"from . import %s_pb2 as \1" % stem, text, flags=re.M)
        if n != 1:
            sys.exit("gyro: %s: expected one line 'import %s_pb2 as ...' from protoc's gRPC plugin, found %d"
                     % (path, stem, n))
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


class BuildPy(build_py):
    """build_py, then the .proto files and the modules generated from them."""

    def run(self):
        super().run()
        src = proto_dir()
        pkg = os.path.join(self.build_lib, "gyro")
        os.makedirs(os.path.join(pkg, "proto"), exist_ok=True)
        for p in PROTOS:
            shutil.copyfile(os.path.join(src, p), os.path.join(pkg, "proto", p))
        protoc(os.path.join(pkg, "proto"), pkg)

    def get_outputs(self, include_bytecode=1):
        extra = [os.path.join(self.build_lib, "gyro", "proto", p) for p in PROTOS]
        for p in PROTOS:
            stem = p[:-len(".proto")]
            extra += [os.path.join(self.build_lib, "gyro", stem + s) for s in ("_pb2.py", "_pb2_grpc.py")]
        return super().get_outputs(include_bytecode) + extra


class Sdist(sdist):
    """sdist with the .proto files in gyro/proto/, so the sdist builds on its own."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        src = proto_dir()
        os.makedirs(os.path.join(base_dir, "gyro", "proto"), exist_ok=True)
        for p in PROTOS:
            shutil.copyfile(os.path.join(src, p), os.path.join(base_dir, "gyro", "proto", p))


options = {}
if os.path.isfile(os.path.join(CHECKOUT, "Makefile")) and os.path.isdir(os.path.join(CHECKOUT, "proto")):
    scratch = os.path.join(CHECKOUT, "build", "python")
    options = {"build": {"build_base": scratch}, "egg_info": {"egg_base": scratch}}
    os.makedirs(scratch, exist_ok=True)

setup(packages=["gyro"], cmdclass={"build_py": BuildPy, "sdist": Sdist}, options=options)
