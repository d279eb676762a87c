#!/bin/bash
# Live file-system changes (issue 32): a continuous file crawl with
# `watch: true`, against the real server and its real clock (a pass every
# second: checkSeconds 1; no reseed during the test):
# 1. the first pass lists the tree and watches its folders;
# 2. a file made, a file changed, a file deleted, a folder moved in from
#    outside, a folder deleted and made again at once: each is in (or out
#    of) the index within seconds, without a reseed (watch.changes,
#    watch.gone; lastReseedTime unchanged);
# 3. a folder of BIG (10,000) files renamed: its documents are all at the
#    new path and none at the old one, the count unchanged (the time it
#    took is printed);
# 4. maxWatches 2 on a tree of 5 folders: the folders past the limit are
#    counted (watch.unwatched), said in the log, and listed again by every
#    pass: a file made in one is indexed all the same (watch.rescanned);
# 5. kill -9 while a file is made: after the restart the first pass lists
#    the tree (watch.treeListed) and indexes it, and the folders are
#    watched again: a change after the restart is in within seconds;
# 6. the kernel's limit: the server in a user namespace of its own whose
#    max_inotify_watches is 3: a tree of 6 folders has 3 unwatched, the
#    log names the kernel's limit, a file made in an unwatched folder is
#    indexed all the same.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
BIG=${BIG:-10000}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T/d1" "$T/big" "$TMP/outside/d2"
T=$(realpath "$T")
echo "alpha words" >"$T/d1/a.txt"
echo "beta words" >"$T/d1/b.txt"
echo "moved folder words" >"$TMP/outside/d2/m.txt"
python3 - "$T/big" "$BIG" <<'PY'
import os, sys
for i in range(int(sys.argv[2])):
    with open(os.path.join(sys.argv[1], "f%05d.txt" % i), "w") as f:
        f.write("big file %d\n" % i)
PY
import_config "$TMP/config.json" '.bulkbuilder.bulkLimitTimeMs = 100'
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

run_data() { req GET "/smila/jobmanager/jobs/$1/$2/"; }
found() {
    curl -sS -G "$BASE/smila/index/default/search" --data-urlencode "q=$1" | jq -r '.total // 0'
}
# until_found WORD N [SECONDS]: until the index has N hits of WORD
until_found() {
    local i
    for i in $(seq 1 $((${3:-30} * 5))); do
        [ "$(found "$1")" = "$2" ] && return 0
        sleep 0.2
    done
    return 1
}
# count PREFIX: documents whose id starts with PREFIX
count() {
    snapshot "$TMP/snap"
    grep -c "^$1" "$TMP/snap" || true
}
# wcount JOB RUN NAME: the fileCrawler's counter NAME
wcount() {
    run_data "$1" "$2"
    jq "[.worker[] | .[\"$3\"] // 0] | add" "$BODY"
}
start_watch() {
    req POST "/smila/jobmanager/jobs/$1/" -d '{"mode": "continuous"}'
    [ "$STATUS" = 200 ] || fail "start $1: $STATUS $(cat "$BODY")"
    jq -r .jobId "$BODY"
}

# ---- 1. the first pass
define_crawl live "$T" src '{"watch": true, "deltaImportStrategy": "full",
    "continuous": {"checkSeconds": 1, "reseedSeconds": 86400, "expirySeconds": 172800}}'
RUN=$(start_watch live)
until_found big "$BIG" 120 && ok "the first pass indexed the tree ($BIG + 2 documents)" ||
    fail "big: $(found big) of $BIG"
run_data live "$RUN"
reseed=$(jq -r .continuous.lastReseedTime "$BODY")

# ---- 2. live changes
echo "gamma words" >"$T/d1/c.txt"
until_found gamma 1 && ok "a file made is indexed within seconds" || fail "gamma: $(found gamma)"
echo "alpha words, changed: delta" >"$T/d1/a.txt"
until_found delta 1 && ok "a file changed is indexed again within seconds" || fail "delta: $(found delta)"
rm "$T/d1/b.txt"
until_found beta 0 && ok "a file deleted leaves the index within seconds" || fail "beta: $(found beta)"
mv "$TMP/outside/d2" "$T/d2"
until_found moved 1 && ok "a folder moved in is indexed within seconds" || fail "moved: $(found moved)"
mkdir "$T/d3"
echo "omega one" >"$T/d3/o1.txt"
echo "omega two" >"$T/d3/o2.txt"
until_found omega 2 && ok "a folder made with two files is indexed" || fail "omega: $(found omega)"
rm -rf "$T/d3"
mkdir "$T/d3"
echo "omega one, made again: theta" >"$T/d3/o1.txt"
until_found theta 1 && until_found omega 1 &&
    ok "a folder deleted and made again at once: the file not made again leaves, the other is new" ||
    fail "omega $(found omega), theta $(found theta)"
[ "$(wcount live "$RUN" watch.gone)" -ge 1 ] && [ "$(wcount live "$RUN" watch.changes)" -ge 3 ] &&
    ok "counted: watch.changes $(wcount live "$RUN" watch.changes), watch.gone $(wcount live "$RUN" watch.gone)" ||
    fail "counters: $(jq -c '[.worker[] | with_entries(select(.key | startswith("watch")))]' "$BODY")"

# ---- 3. a folder of BIG files renamed
t0=$(date +%s.%N)
mv "$T/big" "$T/big2"
moved=""
for _ in $(seq 1 300); do
    [ "$(count "$T/big2/")" = "$BIG" ] && [ "$(count "$T/big/")" = 0 ] && moved=1 && break
    sleep 0.2
done
t1=$(date +%s.%N)
[ -n "$moved" ] && ok "a folder of $BIG files renamed: all at the new path, none at the old ($(echo "$t1 - $t0" | bc) s)" ||
    fail "renamed folder: $(count "$T/big2/") at the new path, $(count "$T/big/") at the old"
[ "$(found big)" = "$BIG" ] && ok "the count is unchanged" || fail "big: $(found big)"
run_data live "$RUN"
[ "$(jq -r .continuous.lastReseedTime "$BODY")" = "$reseed" ] && ok "no reseed was needed" ||
    fail "a reseed ran: $(jq -c .continuous "$BODY")"

# ---- 3b. the root folder moved away, a copy put back, the old one
# deleted: the events of the old tree carry paths the new one has; none
# of its documents may go
snapshot "$TMP/before-root"
tl0=$(wcount live "$RUN" watch.treeListed)
mv "$T" "$T.old"
cp -a "$T.old" "$T"
rm -rf "$T.old"
echo "sigma words" >"$T/d1/s.txt"
until_found sigma 1 60 && ok "after the root was moved and put back, the tree is watched again" ||
    fail "sigma: $(found sigma)"
snapshot "$TMP/after-root"
cut -f1 "$TMP/before-root" >"$TMP/before-ids"
cut -f1 "$TMP/after-root" | grep -v '/d1/s\.txt$' >"$TMP/after-ids" || true
diff "$TMP/before-ids" "$TMP/after-ids" >/dev/null &&
    ok "no document of the tree put back was deleted ($(grep -c "" "$TMP/before-ids"))" ||
    fail "documents differ: $(diff "$TMP/before-ids" "$TMP/after-ids" | head -c 300)"
[ "$(wcount live "$RUN" watch.treeListed)" -gt "$tl0" ] && ok "the move of the root made a pass list the tree" ||
    fail "watch.treeListed $(wcount live "$RUN" watch.treeListed)"

# ---- 4. maxWatches
L="$TMP/limited"
mkdir -p "$L/f1" "$L/f2" "$L/f3" "$L/f4"
L=$(realpath "$L")
echo "limited words" >"$L/f1/x.txt"
define_crawl lim "$L" lsrc '{"watch": true, "maxWatches": 2,
    "continuous": {"checkSeconds": 1, "reseedSeconds": 86400, "expirySeconds": 172800}}'
LRUN=$(start_watch lim)
until_found limited 1 && ok "the limited tree is indexed" || fail "limited: $(found limited)"
[ "$(wcount lim "$LRUN" watch.unwatched)" = 3 ] && ok "3 of 5 folders past maxWatches 2 are counted" ||
    fail "watch.unwatched $(wcount lim "$LRUN" watch.unwatched)"
grep -q "the folders past it are listed again by every pass" "$TMP/server.log" &&
    ok "the log says so" || fail "no warning in the log"
for f in f1 f2 f3 f4; do echo "epsilon $f words" >"$L/$f/e.txt"; done
until_found epsilon 4 && ok "files made in watched and unwatched folders are all indexed" ||
    fail "epsilon: $(found epsilon)"
[ "$(wcount lim "$LRUN" watch.rescanned)" -ge 3 ] && ok "the unwatched folders were listed again" ||
    fail "watch.rescanned $(wcount lim "$LRUN" watch.rescanned)"
req POST "/smila/jobmanager/jobs/lim/$LRUN/cancel"

# ---- 5. kill -9 and restart
tl0=$(wcount live "$RUN" watch.treeListed)
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
echo "zeta words" >"$T/d1/z.txt"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
until_found zeta 1 60 && ok "a file made while the server was down is indexed after the restart" ||
    fail "zeta: $(found zeta)"
[ "$(wcount live "$RUN" watch.treeListed)" -gt "$tl0" ] && ok "the first pass after the restart listed the tree" ||
    fail "watch.treeListed $(wcount live "$RUN" watch.treeListed), $tl0 before"
echo "eta words" >"$T/big2/eta.txt"
until_found eta 1 && ok "after the restart the folders are watched again" || fail "eta: $(found eta)"
req POST "/smila/jobmanager/jobs/live/$RUN/finish"
expect_status 200 "finish"

# ---- 6. the kernel's limit, in a user namespace
stop_server
if unshare -U -r true 2>/dev/null; then
    cat >"$TMP/userns-sluice" <<EOF
#!/bin/sh
exec unshare -U -r sh -c 'echo 3 >/proc/sys/user/max_inotify_watches && exec "\$0" "\$@"' "$SLUICE" "\$@"
EOF
    chmod +x "$TMP/userns-sluice"
    K="$TMP/kernel"
    mkdir -p "$K/k1" "$K/k2" "$K/k3" "$K/k4" "$K/k5"
    K=$(realpath "$K")
    echo "kappa words" >"$K/k1/x.txt"
    SLUICE="$TMP/userns-sluice" start_server --config "$TMP/config.json" --data-dir "$TMP/data"
    define_crawl kern "$K" ksrc '{"watch": true,
        "continuous": {"checkSeconds": 1, "reseedSeconds": 86400, "expirySeconds": 172800}}'
    KRUN=$(start_watch kern)
    until_found kappa 1 && ok "the tree is indexed with a kernel limit of 3 watches" || fail "kappa: $(found kappa)"
    [ "$(wcount kern "$KRUN" watch.unwatched)" = 3 ] && ok "3 of 6 folders past the kernel's limit are counted" ||
        fail "watch.unwatched $(wcount kern "$KRUN" watch.unwatched)"
    grep -q "the limit (the kernel's max_user_watches 3)" "$TMP/server.log" &&
        ok "the log names the kernel's limit" || fail "log: $(grep 'watch of job kern' "$TMP/server.log")"
    for k in k1 k2 k3 k4 k5; do echo "lambda $k words" >"$K/$k/l.txt"; done
    until_found lambda 5 && ok "files made in watched and unwatched folders are all indexed" ||
        fail "lambda: $(found lambda)"
else
    echo "# not run: this machine makes no user namespace (unshare -U), so the kernel's limit is not tested"
fi
finish
