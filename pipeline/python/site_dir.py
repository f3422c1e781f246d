"""site_dir.py PREFIX — the directory `make install` puts the gyro Python package in.

The python running this script decides: a directory of its sys.path under PREFIX/lib ending in
dist-packages or site-packages if there is one (Debian: /usr -> /usr/lib/python3/dist-packages,
/usr/local -> /usr/local/lib/python3.X/dist-packages, where Debian's python3 looks; other
distributions: their site-packages), else PREFIX's standard site-packages
(PREFIX/lib/python3.X/site-packages), which the user then adds to PYTHONPATH.

pip's own --prefix is not used because Debian's python3 rewrites it (its posix_local scheme
puts --prefix /usr/local into /usr/local/local/lib/...).
"""
import os
import sys
import sysconfig


def site_dir(prefix):
    prefix = os.path.normpath(prefix)
    lib = os.path.join(prefix, "lib") + os.sep
    found = [p for p in sys.path
             if p.startswith(lib) and os.path.basename(p) in ("dist-packages", "site-packages")]
    if found:
        # the most specific (python3.X before python3) when both exist
        return sorted(found, key=lambda p: ("python%d.%d" % sys.version_info[:2]) not in p)[0]
    return sysconfig.get_path("purelib", "posix_prefix", {"base": prefix, "platbase": prefix})


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: site_dir.py PREFIX")
    print(site_dir(sys.argv[1]))
