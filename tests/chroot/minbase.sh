#!/usr/bin/env bash
# minbase.sh — the README's two-command promise, checked on a minimal Debian 12: a fresh
# `debootstrap --variant=minbase bookworm` tree (no make, no sudo, no compiler), this checkout
# (its tracked files, as they are in the work tree) copied to /root/gyro and ../shared to
# /root/shared, then, as root inside the chroot, exactly what the README tells a newcomer:
#
#     apt-get update && apt-get install -y make     # the one thing a minimal system lacks
#     make run                                      # deps + build + the main job
#     make check                                    # deps + build + the whole suite
#
# Each step is timed; the log and a summary go to $LOG. Not part of `make check` (it needs root,
# a network mirror and ~2 GB, and takes half an hour on 2 cores): run it by hand after changing
# DEB_PKGS, the deps rule or anything a fresh system might lack.
#
#   sudo tests/chroot/minbase.sh                 (from the checkout's root)
#   environment: DIR (/var/tmp/gyro-minbase), MIRROR (http://deb.debian.org/debian),
#                LOG (DIR.log), KEEP=1 keeps the tree afterwards, STEPS ("run check")
#
# Needs: root (debootstrap, chroot, mounts), the debootstrap package (apt-get install
# debootstrap), the mirror reachable. Everything mounted (proc, sys, dev) lives in a private
# mount namespace (unshare -m), so nothing is left mounted on the host when the script ends,
# even when it is killed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${DIR:-/var/tmp/gyro-minbase}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
LOG=${LOG:-$DIR.log}
STEPS=${STEPS:-run check}
[ "$(id -u)" = 0 ] || { echo "minbase.sh: run as root (debootstrap and chroot need it)" >&2; exit 2; }
command -v debootstrap > /dev/null || { echo "minbase.sh: apt-get install debootstrap" >&2; exit 2; }
[ -d "$root/../shared" ] || { echo "minbase.sh: no $root/../shared beside the checkout" >&2; exit 2; }

: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
# timed NAME CMD...: run CMD, log its output, record its wall time and exit status
timed() {
  local name=$1 t0 rc; shift
  t0=$(date +%s)
  if "$@" >> "$LOG" 2>&1; then rc=0; else rc=$?; fi
  say "step $name: exit $rc, $(( $(date +%s) - t0 )) s"
  return $rc
}

if [ ! -x "$DIR/usr/bin/apt-get" ]; then
  rm -rf "$DIR"
  timed debootstrap debootstrap --variant=minbase bookworm "$DIR" "$MIRROR"
else
  say "reusing $DIR"
fi
say "minbase: $(chroot "$DIR" dpkg-query -W -f='${binary:Package}\n' | wc -l) packages;" \
    "make: $(chroot "$DIR" sh -c 'command -v make || echo absent');" \
    "sudo: $(chroot "$DIR" sh -c 'command -v sudo || echo absent')"

rm -rf "$DIR/root/gyro" "$DIR/root/shared"
mkdir -p "$DIR/root/gyro"
(cd "$root" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$DIR/root/gyro"
cp -a "$root/../shared" "$DIR/root/shared"
cp /etc/resolv.conf "$DIR/etc/resolv.conf"

inside() { # inside CMD: run CMD in the chroot as a login shell of root would
  unshare -m sh -c '
    set -e; d=$1; shift
    mount --make-rprivate /
    mount -t proc proc "$d/proc"; mount -t sysfs sys "$d/sys"; mount --rbind /dev "$d/dev"
    exec chroot "$d" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      /bin/sh -c "cd /root/gyro && $*"' sh "$DIR" "$@"
}

status=0
timed make-package inside 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y make' || status=1
for s in $STEPS; do
  timed "make-$s" inside "make $s" || status=1
done
summary=$(grep -E '^== [0-9]+ passed' "$LOG" | tail -1 || true)
[ -z "$summary" ] || say "suite: $summary"
grep -E '^(FAIL|SKIP) ' "$LOG" | sed 's/^/  /' | tee -a "$LOG.summary" || true
[ "${KEEP:-0}" = 1 ] || rm -rf "$DIR"
say "minbase.sh: $([ $status = 0 ] && echo PASS || echo FAIL) (log: $LOG)"
exit $status
