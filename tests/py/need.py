"""need.py — the guard of the tests that use Python modules: python3 tests/py/need.py MODULE...

Exit 0 when every module imports. Exit 77 (the suite's "skipped") when a module's package is not
installed at all, naming the Debian package list `make deps` installs. Exit 1 (a failure, not a
skip) when a package is installed but its module does not import, with Python's own error: a
broken install must say so. The case this was written for: Debian 12's python3-grpc-tools
imports pkg_resources without depending on python3-pkg-resources, so on a minimal system
`import grpc_tools` works and `import grpc_tools.protoc` fails with "No module named
'pkg_resources'".
"""
import importlib
import importlib.util
import sys
import traceback

modules = sys.argv[1:]
missing = [m for m in modules if importlib.util.find_spec(m.split('.')[0]) is None]
if missing:
    print('not installed: %s (make deps installs python3-protobuf, python3-grpcio, python3-grpc-tools, '
          'python3-pkg-resources)' % ' '.join(missing))
    sys.exit(77)
for m in modules:
    try:
        importlib.import_module(m)
    except Exception as e:  # noqa: BLE001 - any import failure is the finding
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        print('FAIL: %s is installed but does not import: %s%s' % (
            m, last, ' (Debian: apt-get install python3-pkg-resources; make deps does)'
            if 'pkg_resources' in last else ''))
        sys.exit(1)
