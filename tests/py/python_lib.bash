# python_lib.bash — the gyro Python package (pipeline/python) for tests/e2e/python_*.sh (sourced).
#
# Debian's /usr/bin/python3 (the python3 first on PATH may not see Debian's packages). The
# package is installed into a virtual environment in $TMPDIR that sees Debian's site packages
# (python3-protobuf, python3-grpcio); pip never reaches an index (--no-index): the build uses
# the installed setuptools, wheel and grpc_tools (--no-build-isolation).

PY=/usr/bin/python3

# py_require: exit 77 (skip) unless Debian's python3 has what building the package needs.
py_require() {
  [ -x "$PY" ] || { echo "no $PY"; exit 77; }
  "$PY" tests/py/need.py setuptools wheel venv google.protobuf grpc grpc_tools.protoc || exit $?
  "$PY" -m pip --version >/dev/null 2>&1 || { echo "python3-pip missing (make deps)"; exit 77; }
}

# py_package_env DIR: a venv at DIR (pip taken from the system through --system-site-packages)
# with the package installed; sets PYV to its python.
py_package_env() {
  "$PY" -m venv --system-site-packages --without-pip "$1" || { echo "FAIL: venv"; exit 1; }
  "$1/bin/python" -m pip install -q --no-build-isolation --no-index --root-user-action=ignore ./pipeline/python \
    > "$1.log" 2>&1 || { echo "FAIL: pip install ./pipeline/python"; cat "$1.log"; exit 1; }
  PYV="$1/bin/python"
}
