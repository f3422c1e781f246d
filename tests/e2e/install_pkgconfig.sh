#!/usr/bin/env bash
# install_pkgconfig.sh — `make install PREFIX=/usr` into a DESTDIR, used as a Debian user uses a
# library: the files land where a Debian package would put them (multiarch libdir, soname links,
# gyro.pc for that prefix, share/gyro/gyro.proto, the public headers under include/gyro/ and no
# *_impl.h or other internal header); every installed header compiles on its own in C11 and
# C++11 with -Werror; a C program and a C++ program are built through `pkg-config --cflags
# --libs gyro` (PKG_CONFIG_SYSROOT_DIR and PKG_CONFIG_PATH pointing into the DESTDIR) and run
# against the installed libgyro.so (the C++ one classifies with a model trained by the installed
# gyro and must agree with `gyro classify predict`), and linked with libgyro.a and the libraries
# of gyro.pc's private requirements;
# the shared library exports gyro_* only (and accept4, pipeline/libgyro.map says why); Debian's
# build flags (dpkg-buildflags) reach every compile and link line.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
root=$PWD
build=${GYRO_BUILD:-build}
T=$TMPDIR
dest="$T/dest"
command -v pkg-config > /dev/null || { echo "SKIP: no pkg-config (make deps)"; exit 77; }

# A sanitizer build (make sanitize writes "CC FLAGS" to BUILD/.compiler): install with the same
# compiler and flags, and build the programs with them too.
cc=cc cxx=c++ san=""
if [ -f "$build/.compiler" ]; then
  read -r cc san < "$build/.compiler"
  case "$cc" in clang) cxx=clang++ ;; gcc) cxx=g++ ;; esac
  make_san=(CC="$cc" SAN_FLAGS="$san" OPT=-O1)
else
  make_san=()
fi
command -v "$cxx" > /dev/null || { echo "FAIL: no C++ compiler $cxx (make deps installs build-essential)"; exit 1; }

make -s install DESTDIR="$dest" PREFIX=/usr BUILD="$build" PYTHON= "${make_san[@]}" > "$T/install.log" 2>&1 \
  || { echo "FAIL: make install"; cat "$T/install.log"; exit 1; }

# ---- the layout -------------------------------------------------------------------------------
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || "$cc" -print-multiarch)
[ -n "$ma" ] || { echo "FAIL: no multiarch triplet"; exit 1; }
lib="$dest/usr/lib/$ma"
for f in libgyro.so.0.1.0 libgyro.so.0 libgyro.so libgyro.a pkgconfig/gyro.pc; do
  [ -e "$lib/$f" ] || { echo "FAIL: $lib/$f missing"; find "$dest" | sort; exit 1; }
done
[ ! -e "$dest/usr/lib/libgyro.so" ] || { echo "FAIL: libgyro.so in /usr/lib, not in /usr/lib/$ma"; exit 1; }
[ "$(readlink "$lib/libgyro.so")" = libgyro.so.0 ] && [ "$(readlink "$lib/libgyro.so.0")" = libgyro.so.0.1.0 ] \
  || { echo "FAIL: soname links"; ls -l "$lib"; exit 1; }
grep -q 'SONAME.*\[libgyro\.so\.0\]' <<< "$(readelf -d "$lib/libgyro.so.0.1.0")" || { echo "FAIL: soname"; exit 1; }
grep -qx 'prefix=/usr' "$lib/pkgconfig/gyro.pc" && grep -qx "libdir=\${prefix}/lib/$ma" "$lib/pkgconfig/gyro.pc" \
  || { echo "FAIL: gyro.pc is not for PREFIX=/usr:"; cat "$lib/pkgconfig/gyro.pc"; exit 1; }
cmp proto/gyro.proto "$dest/usr/share/gyro/gyro.proto" || { echo "FAIL: share/gyro/gyro.proto"; exit 1; }
[ -x "$dest/usr/bin/gyro" ] && [ -f "$dest/usr/share/man/man1/gyro.1" ] || { echo "FAIL: binary or man page"; exit 1; }
echo "ok   layout: /usr/lib/$ma (soname libgyro.so.0), gyro.pc for /usr, share/gyro/gyro.proto"

inc="$dest/usr/include/gyro"
bad=$(cd "$inc" && find . -name '*_impl.h' -o -name 'hyp_consts.h' -o -name 'health.pb-c.h' -o -name 'grpc_core.h' \
      -o -name 'service.h' -o -path './pipeline/cli/*' | sort)
[ -z "$bad" ] || { echo "FAIL: internal headers installed: $bad"; exit 1; }
want=$( (echo gyro.h; sed -n 's/^#include "\(.*\)"$/\1/p' pipeline/gyro.h) | sort)
have=$(cd "$inc" && find . -type f | sed 's|^\./||' | sort)
[ "$have" = "$want" ] || { echo "FAIL: installed headers differ from pipeline/gyro.h's list:"; diff <(echo "$want") <(echo "$have"); exit 1; }
if grep -rn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$inc"; then
  echo "FAIL: an installed header includes a path relative to the source tree"; exit 1
fi
nh=$(wc -l <<< "$have")
echo "ok   $nh headers under include/gyro/, none internal, all included as <gyro/...>"

# ---- pkg-config from the DESTDIR --------------------------------------------------------------
export PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$lib/pkgconfig"
pkg-config --exists gyro || { echo "FAIL: pkg-config does not find gyro"; exit 1; }
[ "$(pkg-config --modversion gyro)" = "$(sed -n 's/^VERSION *:= *//p' Makefile)" ] || { echo "FAIL: version"; exit 1; }
# /usr/include is a system directory, which pkg-config leaves out; inside the sysroot it is needed
cflags=$(PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config --cflags gyro)
libs=$(pkg-config --libs gyro)
case " $cflags " in *" -I$dest/usr/include "*) ;; *) echo "FAIL: cflags $cflags"; exit 1 ;; esac
case " $libs " in *" -L$lib "*-lgyro" "*) ;; *) echo "FAIL: libs $libs"; exit 1 ;; esac
[ "$(pkg-config --variable=protodir gyro)" = "$dest/usr/share/gyro" ] || { echo "FAIL: protodir"; exit 1; }
echo "ok   pkg-config: $cflags $libs"

# every header alone, in C and in C++ (a header that needs another it does not include fails)
for h in $have; do
  printf '#include <gyro/%s>\n' "$h" > "$T/one.c"
  # shellcheck disable=SC2086
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags -fsyntax-only "$T/one.c" \
    || { echo "FAIL: <gyro/$h> alone in C11"; exit 1; }
  cp "$T/one.c" "$T/one.cc"
  # shellcheck disable=SC2086
  "$cxx" -std=c++11 -Wall -Wextra -Wpedantic -Werror $cflags -fsyntax-only "$T/one.cc" \
    || { echo "FAIL: <gyro/$h> alone in C++11"; exit 1; }
done
echo "ok   each installed header compiles alone as C11 and C++11 (-Wall -Wextra -Wpedantic -Werror)"

# ---- a C program --------------------------------------------------------------------------------
cat > "$T/prog.c" <<'EOF'
#include <gyro/gyro.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    /* d(x, 0) = 2 artanh(|x|) in the unit ball (c = 1) */
    double x[2] = {0.5, 0.0}, o[2] = {0.0, 0.0};
    double d = gyro_poincare_dist_f64(x, o, 1.0, 2);
    if (fabs(d - 2.0 * atanh(0.5)) > 1e-12) { fprintf(stderr, "dist %.17g\n", d); return 1; }

    /* NFKC (full-width to ASCII) + traditional -> simplified */
    gyro_normalizer *n = NULL;
    gyro_normalized out;
    const char *in = "漢語ＡＢＣ";
    if (gyro_normalizer_new(NULL, &n) != GYRO_OK
        || gyro_normalize_text(n, in, strlen(in), &out) != GYRO_OK) {
        fprintf(stderr, "normalize: %s\n", gyro_error_message());
        return 1;
    }
    printf("%s %zu\n", out.text, out.n_chars);
    gyro_normalizer_free(n);

    /* a failure is a status and a message, never an exit */
    gyro_classifier *m = NULL;
    gyro_status st = gyro_classifier_load("/nonexistent/model.clf", &m);
    printf("%d %s\n", st == GYRO_ERR_IO && m == NULL, strstr(gyro_error_message(), "/nonexistent/model.clf") ? "named" : "unnamed");
    return 0;
}
EOF
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror $san $cflags "$T/prog.c" -o "$T/prog" $libs -lm \
  || { echo "FAIL: the C program does not build through pkg-config"; exit 1; }
out=$(LD_LIBRARY_PATH="$lib" "$T/prog")
[ "$out" = $'汉语ABC 5\n1 named' ] || { echo "FAIL: the C program printed: $out"; exit 1; }
deps=$(LD_LIBRARY_PATH="$lib" ldd "$T/prog")   # (not piped into grep -q: pipefail and SIGPIPE)
grep -qF "libgyro.so.0 => $lib/libgyro.so.0" <<< "$deps" \
  || { echo "FAIL: the program does not use the installed libgyro.so.0"; echo "$deps"; exit 1; }
echo "ok   C program through pkg-config, against $lib/libgyro.so.0: $(tr '\n' ' ' <<< "$out")"

# ---- a C++ program: classify with a model the installed gyro trained ---------------------------
. "$root/tests/e2e/lib/intents.sh"
(cd "$T" && gen_intents > data.tsv)
"$dest/usr/bin/gyro" import -f tsv -q -o "$T/data.pb" "$T/data.tsv"
"$dest/usr/bin/gyro" classify train --arch ngrams --dim 16 --buckets 2000 --epochs 20 --lr 0.5 \
  --dev-fraction 0 --seed 3 --quiet -o "$T/m.clf" "$T/data.pb"
cat > "$T/prog.cc" <<'EOF'
#include <gyro/gyro.h>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    gyro_classifier *m = nullptr;
    gyro_classifier_scratch *s = nullptr;
    if (gyro_classifier_load(argv[1], &m) != GYRO_OK || gyro_classifier_scratch_new(m, &s) != GYRO_OK) {
        std::cerr << gyro_error_message() << '\n';
        return 1;
    }
    std::string line;
    std::vector<gyro_intent> best(1);
    while (std::getline(std::cin, line)) {
        int n = 0;
        if (gyro_classifier_predict(m, s, line.c_str(), 1, best.data(), &n) != GYRO_OK || n != 1) {
            std::cerr << gyro_error_message() << '\n';
            return 1;
        }
        std::printf("%s\t%s\t%.6f\n", line.c_str(), best[0].label, (double)best[0].probability);
    }
    gyro_classifier_scratch_free(s);
    gyro_classifier_free(m);
    return 0;
}
EOF
# shellcheck disable=SC2086
"$cxx" -std=c++11 -Wall -Wextra -Werror $san $cflags "$T/prog.cc" -o "$T/progxx" $libs \
  || { echo "FAIL: the C++ program does not build through pkg-config"; exit 1; }
printf '播放稻香\n导航到机场\n暂停一下\n请带我去学校\n' > "$T/q.txt"
LD_LIBRARY_PATH="$lib" "$T/progxx" "$T/m.clf" < "$T/q.txt" > "$T/cxx.out"
"$dest/usr/bin/gyro" classify predict -m "$T/m.clf" - < "$T/q.txt" \
  | sed -E 's/.*"text":"([^"]*)","intents":\[\{"label":"([^"]*)","probability":([0-9.e-]+).*/\1\t\2\t\3/' \
  | awk -F'\t' '{ printf "%s\t%s\t%.6f\n", $1, $2, $3 }' > "$T/cli.out"
[ "$(cut -f2 "$T/cxx.out" | tr '\n' ' ')" = 'music.play navigation.navigation music.pause navigation.navigation ' ] \
  || { echo "FAIL: the C++ program's intents:"; cat "$T/cxx.out"; exit 1; }
diff "$T/cli.out" "$T/cxx.out" || { echo "FAIL: the C++ program and gyro classify predict differ"; exit 1; }
echo "ok   C++ program through pkg-config classifies as gyro classify predict does ($(wc -l < "$T/cxx.out") utterances)"

# ---- libgyro.a, through gyro.pc's private requirements ----------------------------------------
# libgyro.a and the shared libraries of the packages gyro.pc requires privately. (Not `pkg-config
# --static --libs gyro`, which flattens their own private libraries too: Debian's openblas.pc
# lists -lgfortran, whose .so link only libgfortran-12-dev ships, absent on a minimal system.)
slibs="-L$lib -l:libgyro.a $(pkg-config --libs gyro | sed 's/-lgyro//') $(pkg-config --libs $(pkg-config --print-requires-private gyro)) -lm -lpthread"
# shellcheck disable=SC2086
"$cc" -std=c11 $san $cflags "$T/prog.c" -o "$T/prog-static" $slibs \
  || { echo "FAIL: link with libgyro.a and gyro.pc's private requirements ($slibs)"; exit 1; }
deps=$(ldd "$T/prog-static")
! grep -q libgyro <<< "$deps" || { echo "FAIL: the static program loads libgyro.so"; exit 1; }
[ "$("$T/prog-static")" = "$out" ] || { echo "FAIL: the static program's output"; exit 1; }
echo "ok   the same C program linked with libgyro.a (pkg-config --print-requires-private gyro)"

# ---- exported symbols ---------------------------------------------------------------------------
nm -D --defined-only "$lib/libgyro.so.0.1.0" | awk '{ print $NF }' > "$T/syms"
others=$(grep -v '^gyro_' "$T/syms" | grep -vx accept4 || true)
[ -z "$others" ] || { echo "FAIL: libgyro.so exports more than gyro_*:"; head -20 <<< "$others"; exit 1; }
for s in gyro_classifier_load gyro_poincare_dist_f64 gyro__v1__document__unpack; do
  grep -qx "$s" "$T/syms" || { echo "FAIL: $s is not exported"; exit 1; }
done
! grep -q '^grpc__' "$T/syms" || { echo "FAIL: grpc.health.v1 symbols exported"; exit 1; }
echo "ok   libgyro.so exports $(wc -l < "$T/syms") symbols, all gyro_* or gyro__* but accept4"

# ---- Debian's build flags reach the compiler and the linker -------------------------------------
if command -v dpkg-buildflags > /dev/null; then
  eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
  dry=$(make -n -B BUILD="$T/hardened" "$T/hardened/libgyro.so" "$T/hardened/gyro" 2>&1)
  ncc=$(grep -c -- ' -c .*\.c -o ' <<< "$dry")
  for f in $CPPFLAGS $CFLAGS; do
    n=$(grep -- ' -c .*\.c -o ' <<< "$dry" | grep -cF -- " $f" || true)
    [ "$n" = "$ncc" ] || { echo "FAIL: $f on $n of $ncc compile lines"; exit 1; }
  done
  for f in $LDFLAGS; do
    n=$(grep -E -- '-o [^ ]*/(libgyro\.so|gyro) ' <<< "$dry" | grep -cF -- " $f" || true)
    [ "$n" = 2 ] || { echo "FAIL: $f on $n of the 2 link lines"; exit 1; }
  done
  echo "ok   dpkg-buildflags (hardening=+all) on all $ncc compile lines and both link lines"
  unset CFLAGS CPPFLAGS LDFLAGS CXXFLAGS
fi
echo "PASS"
