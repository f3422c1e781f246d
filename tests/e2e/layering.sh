#!/usr/bin/env bash
# layering.sh — every #include reaches down, never up (README "Layout"):
#   models/, embeddings/  never include pipeline/, a generated protobuf header (*.pb-c.h) or
#                         <mpi.h> (the collectives reach them through models/core/sync.h);
#   models/core/          includes nothing of ours outside models/core/;
#   models/text/          includes nothing of ours but models/core/ and models/text/.
# Each arrow that reaches up is printed as "file:line: ..." and fails the test. Then no two
# library files may call each other in a circle (A.c calls B.c, which calls back into A.c, also
# through more files): that is read from the symbols of the built objects ($GYRO_BUILD/obj), so
# it also sees calls declared in a shared header. Each checker is first run on a small planted
# case, which it must reject, so the test cannot pass by checking nothing.
set -uo pipefail
: "${TMPDIR:?}"
root=$(pwd)

# check_tree DIR: print every upward include under DIR/models and DIR/embeddings (nothing when
# the tree is clean; xargs may run awk more than once, so the output is the verdict).
check_tree() {
  (cd "$1" && find models embeddings -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) \
      -print0 2>/dev/null | sort -z | xargs -0 -r awk '
    match($0, /^[ \t]*#[ \t]*include[ \t]*[<"][^>"]+[>"]/) {
      inc = substr($0, RSTART, RLENGTH)
      quoted = inc ~ /"/
      sub(/^[^<"]*[<"]/, "", inc); sub(/[>"]$/, "", inc)
      ours = quoted || inc ~ /^(models|embeddings|pipeline|proto|corpora|tests)\//
      f = FILENAME; why = ""
      if (inc ~ /\.pb-c\.h$/) why = "a generated protobuf header"
      else if (inc ~ /^mpi\.h$/) why = "MPI is the transport of pipeline/ (models/core/sync.h is the interface)"
      else if (inc ~ /^pipeline\//) why = "pipeline/ is above models/ and embeddings/"
      else if (f ~ /^models\/core\// && ours && inc !~ /^models\/core\//)
        why = "models/core/ includes only models/core/"
      else if (f ~ /^models\/text\// && ours && inc !~ /^models\/(core|text)\//)
        why = "models/text/ includes only models/core/ and models/text/"
      if (why != "") printf "%s:%d: #include \"%s\" reaches up: %s\n", f, FNR, inc, why
    }')
}

# ---- the checker rejects each kind of upward arrow ---------------------------------------------
t="$TMPDIR/tree"
mkdir -p "$t/models/core" "$t/models/text" "$t/models/rl" "$t/embeddings"
printf '#include <stdio.h>\n#include "models/core/status.h"\n#include "models/text/utf8.h"\n' > "$t/models/core/a.c"
printf '#include "models/core/status.h"\n#include "models/text/utf8.h"\n  #  include "embeddings/vocab.h"\n' > "$t/models/text/b.h"
printf '#include "models/text/labels.h"\n#include "pipeline/stream.h"\n' > "$t/models/rl/c.h"
printf '#include "embeddings/vocab.h"\n#include <proto/gyro.pb-c.h>\n/* #include "pipeline/x.h" in a comment */\n#include <mpi.h>\n' > "$t/embeddings/d.c"
out=$(check_tree "$t")
want='models/core/a.c:3: #include "models/text/utf8.h" reaches up: models/core/ includes only models/core/
models/rl/c.h:2: #include "pipeline/stream.h" reaches up: pipeline/ is above models/ and embeddings/
models/text/b.h:3: #include "embeddings/vocab.h" reaches up: models/text/ includes only models/core/ and models/text/
embeddings/d.c:2: #include "proto/gyro.pb-c.h" reaches up: a generated protobuf header
embeddings/d.c:4: #include "mpi.h" reaches up: MPI is the transport of pipeline/ (models/core/sync.h is the interface)'
if [ "$(sort <<< "$out")" != "$(sort <<< "$want")" ]; then
  echo "FAIL: the checker does not report exactly the planted upward includes:"
  echo "$out"
  exit 1
fi

# ---- the tree itself --------------------------------------------------------------------------
out=$(check_tree "$root")
if [ -n "$out" ]; then
  echo "FAIL: includes that reach up (models/ and embeddings/ sit below pipeline/):"
  echo "$out"
  exit 1
fi
# ---- no circle of calls between the library's files ------------------------------------------
# call_circles DIR: the sets of objects under DIR that call each other in a circle, one per line.
call_circles() {
  find "$1" -name '*.o' -not -path '*/tests/*' -not -path '*/pipeline/cli/*' -print0 | sort -z |
    xargs -0 nm -A 2>/dev/null | python3 -c '
import sys, collections
defs, uses = {}, collections.defaultdict(set)
for line in sys.stdin:
    obj, _, rest = line.partition(":")
    f = rest.split()
    if len(f) == 3 and f[1] in "TDBR": defs[f[2]] = obj
    elif len(f) == 2 and f[0] == "U": uses[obj].add(f[1])
g = {o: {defs[x] for x in xs if x in defs and defs[x] != o} for o, xs in uses.items()}
index, low, stack, on, n = {}, {}, [], set(), [0]
sys.setrecursionlimit(100000)
def visit(v):   # Tarjan: strongly connected components
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in g.get(v, ()):
        if w not in index: visit(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: print(" <-> ".join(sorted(comp)))
for v in sorted(g):
    if v not in index: visit(v)
'
}

c="$TMPDIR/calls"; mkdir -p "$c"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' > "$c/a.c"
printf 'int a(int);\nint b(int x) { return a(x); }\n' > "$c/b.c"
printf 'int a(int);\nint leaf(int x) { return a(x); }\n' > "$c/leaf.c"
for f in a b leaf; do cc -c "$c/$f.c" -o "$c/$f.o" || exit 1; done
out=$(call_circles "$c")
if [ "$out" != "$c/a.o <-> $c/b.o" ]; then
  echo "FAIL: the circle checker does not report exactly the planted circle a.o <-> b.o: '$out'"
  exit 1
fi
obj="$root/${GYRO_BUILD:-build}/obj"
[ -d "$obj/models" ] || { echo "FAIL: no objects in $obj (build first)"; exit 1; }
out=$(call_circles "$obj")
if [ -n "$out" ]; then
  echo "FAIL: library files that call each other in a circle (${obj#$root/}):"
  echo "$out"
  exit 1
fi

n=$(cd "$root" && find models embeddings -type f \( -name '*.c' -o -name '*.h' \) | wc -l)
echo "layering: $n files of models/ and embeddings/ include only downwards; no circle of calls"
