#!/bin/bash
# Installation (docs/operations.md "Installing"): `cmake --install` of the
# build into a DESTDIR puts the binaries, the manual pages (groff renders
# each without a warning), the configuration (sluice.json with dataDir
# /var/lib/sluice, jobs.json, workflows/), the systemd unit and the
# sysusers.d entry in place; the installed binary runs with the installed
# configuration (--config-dir) and tells a service manager it is ready
# (sd_notify READY=1 on a NOTIFY_SOCKET the test listens on; systemd
# itself does not run here).  How `sluice serve` finds its configuration:
# --config-dir, the directory of --config, a current directory holding
# config/ and workflows/, SYSCONFDIR/sluice; with none, it warns that no
# workflow and no job were loaded.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$(dirname "$SLUICE")" && pwd)

ROOT="$TMP/root"
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD/CMakeCache.txt")
DESTDIR="$ROOT" cmake --install "$BUILD" >"$TMP/install.log" 2>&1 &&
    ok "cmake --install into DESTDIR (prefix $prefix)" || fail "install: $(tail -5 "$TMP/install.log")"
P="$ROOT$prefix"
# where the binary looks last, and where the configuration is installed
sysconf=$(grep -o 'SL_CLI_SYSCONF_DIR=[^ ]*' "$BUILD/cli/CMakeFiles/sl_cli.dir/flags.make" | head -1 |
    sed 's/^SL_CLI_SYSCONF_DIR=//; s/[\\"]//g')
E="$ROOT$sysconf"
missing=""
for f in "$P/bin/sluice" "$P/bin/sluice-pdf" "$E/sluice.json" "$E/jobs.json" "$E/workflows/fileCrawling.json" \
    "$E/workflows/indexUpdate.json" "$P/share/man/man1/sluice.1" "$P/share/man/man1/sluice-serve.1" \
    "$P/share/man/man1/sluice-job.1" "$P/share/man/man5/sluice.json.5" "$P/lib/systemd/system/sluice.service" \
    "$P/lib/sysusers.d/sluice.conf"; do
    [ -e "$f" ] || missing="$missing ${f#"$ROOT"}"
done
[ -z "$missing" ] && ok "binaries, configuration, workflows, manual pages, unit and sysusers entry installed" ||
    fail "not installed:$missing"
[ "$(jq -r .dataDir "$E/sluice.json")" = /var/lib/sluice ] && ok "the installed configuration keeps its data in /var/lib/sluice" ||
    fail "dataDir $(jq -r .dataDir "$E/sluice.json")"
bad=""
for m in "$P"/share/man/man1/*.1 "$P"/share/man/man5/*.5; do
    out=$(groff -mandoc -T utf8 -ww -z "$m" 2>&1)
    [ -z "$out" ] || bad="$bad $(basename "$m"): $out"
done
[ -z "$bad" ] && ok "every manual page renders without a warning ($(ls "$P"/share/man/man*/ | grep -c '\.[15]$') pages)" ||
    fail "groff:$bad"
unit="$P/lib/systemd/system/sluice.service"
{ grep -qx "Type=notify" "$unit" && grep -qx "ExecStart=$prefix/bin/sluice serve --config-dir ${E#"$ROOT"}" "$unit" &&
    grep -qx "User=sluice" "$unit" && grep -qx "StateDirectory=sluice" "$unit" && grep -qx "ProtectSystem=strict" "$unit" &&
    grep -qx "NoNewPrivileges=yes" "$unit"; } &&
    ok "the unit: Type=notify, the installed binary and configuration, user sluice, hardened" ||
    fail "unit: $(grep -E '^(Type|ExecStart|User)=' "$unit" | tr '\n' ' ')"
grep -q '^u sluice - ' "$P/lib/sysusers.d/sluice.conf" && ok "the sysusers.d entry makes the user sluice" ||
    fail "sysusers: $(cat "$P/lib/sysusers.d/sluice.conf")"

# The installed binary with the installed configuration, and its
# readiness on a NOTIFY_SOCKET as systemd would give it.
python3 - "$TMP/notify.sock" "$TMP/notify.out" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "w") as out:
    while True:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            break
        out.write(msg.replace("\n", " ") + "\n")
        out.flush()
        if "STOPPING=1" in msg:
            break
EOF
npid=$!
for _ in $(seq 1 100); do [ -S "$TMP/notify.sock" ] && break; sleep 0.05; done
SLUICE="$P/bin/sluice" NOTIFY_SOCKET="$TMP/notify.sock" start_server --config-dir "$E" --data-dir "$TMP/data" --listen 127.0.0.1:0
grep -q "configuration: ${E} (--config-dir); definitions from $E, workflows from $E/workflows: [1-9][0-9]* workflow(s), 3 job(s)" \
    "$TMP/server.log" && ok "the installed server says which configuration it loaded: its workflows and 3 jobs" ||
    fail "configuration line: $(grep configuration "$TMP/server.log")"
out=$("$P/bin/sluice" job list --server "$BASE")
echo "$out" | grep -q '^crawlFilesystem' && echo "$out" | grep -q '^indexUpdate  running' &&
    ok "the installed jobs are there, indexUpdate running" || fail "job list: $out"
for _ in $(seq 1 100); do grep -q READY=1 "$TMP/notify.out" 2>/dev/null && break; sleep 0.05; done
grep -q "READY=1 STATUS=listening on port ${BASE##*:}" "$TMP/notify.out" &&
    ok "READY=1 sent to NOTIFY_SOCKET once it listens" || fail "notify: $(cat "$TMP/notify.out" 2>&1)"
stop_server
wait $npid 2>/dev/null || true
grep -q "STOPPING=1" "$TMP/notify.out" && ok "STOPPING=1 sent when it stops" || fail "notify: $(cat "$TMP/notify.out")"

# How serve finds its configuration.
mkdir -p "$TMP/tree" "$TMP/empty"
cp -r "$SRC/config" "$SRC/workflows" "$TMP/tree/"
jq '.listen = "127.0.0.1:0" | .dataDir = "'"$TMP/data2"'"' "$SRC/config/sluice.json" >"$TMP/tree/config/sluice.json"
cd "$TMP/tree"
start_server
cd - >/dev/null
grep -q "configuration: ./config and ./workflows (the current directory holds both)" "$TMP/server.log" &&
    grep -q " 3 job(s)" "$TMP/server.log" && ok "in a source tree: ./config and ./workflows" ||
    fail "source tree: $(grep configuration "$TMP/server.log")"
stop_server
start_server --config "$TMP/tree/config/sluice.json"
grep -q "configuration: $TMP/tree/config (--config); definitions from $TMP/tree/config, workflows from $TMP/tree/config/../workflows" \
    "$TMP/server.log" && ok "--config FILE: definitions beside it, workflows/ of its parent" ||
    fail "--config: $(grep configuration "$TMP/server.log")"
stop_server
if [ -n "$sysconf" ] && [ -e "$sysconf" ]; then
    skip_note="$sysconf exists on this machine: the case without any configuration is not checked"
    echo "# $skip_note"
else
    cd "$TMP/empty"
    start_server --data-dir "$TMP/data3" --listen 127.0.0.1:0
    cd - >/dev/null
    grep -q "NO WORKFLOW LOADED" "$TMP/server.log" && grep -q "NO JOB LOADED" "$TMP/server.log" &&
        grep -q "configuration: $sysconf (none found, the default)" "$TMP/server.log" &&
        ok "no configuration anywhere: it says so, and warns that no workflow and no job were loaded" ||
        fail "empty: $(grep -E 'configuration|LOADED' "$TMP/server.log")"
    stop_server
fi
rc=0; "$SLUICE" serve --config "$TMP/tree/config/sluice.json" --config-dir "$TMP/tree" 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q "exclude each other" "$TMP/err" && ok "--config with --config-dir: usage error" ||
    fail "both: $rc $(cat "$TMP/err")"
rc=0; "$SLUICE" serve --config-dir "$TMP/nothere" 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q "not a directory" "$TMP/err" && ok "--config-dir that does not exist: usage error" ||
    fail "missing dir: $rc $(cat "$TMP/err")"
finish
