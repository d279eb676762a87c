#!/bin/bash
# The command line: help texts, version, usage errors, config errors.
. "$(dirname "$0")/lib.sh"

"$SLUICE" --help >"$TMP/out" && grep -q serve "$TMP/out" && grep -q bulk "$TMP/out" \
    && ok "sluice --help lists the commands" || fail "sluice --help"
"$SLUICE" --version | grep -q '^sluice [0-9]' && ok "--version" || fail "--version"
"$SLUICE" serve --help >"$TMP/out" && grep -q -- --listen "$TMP/out" \
    && grep -q -- --data-dir "$TMP/out" && grep -q -- --config "$TMP/out" \
    && grep -q maxBodyBytes "$TMP/out" && ok "serve --help lists options and keys" \
    || fail "serve --help"
"$SLUICE" bulk --help >"$TMP/out" && grep -q from-jsonl "$TMP/out" \
    && ok "bulk --help" || fail "bulk --help"
rc=0; "$SLUICE" nonsense 2>/dev/null || rc=$?
[ "$rc" = 2 ] && ok "unknown command exits 2" || fail "unknown command exit $rc"
rc=0; "$SLUICE" serve --bogus 2>/dev/null || rc=$?
[ "$rc" = 2 ] && ok "unknown option exits 2" || fail "unknown option exit $rc"

echo '{"listen": "127.0.0.1:0", "htpp": {}}' >"$TMP/typo.json"
echo '{"http": {"threads": 0}}' >"$TMP/range.json"
echo '{"http": {"thread": 4}}' >"$TMP/subkey.json"
echo '{"listen": 5}' >"$TMP/type.json"
echo '{"listen": ' >"$TMP/broken.json"
echo '{"textExtractor": {"converters": {"application/pdf": {"command": ["sluice-pdf", "{file}"], "persistent": true}}}}' >"$TMP/conv.json"
echo '{"textExtractor": {"converters": {"application/pdf": {"command": ["x"], "maxDocuments": 0}}}}' >"$TMP/convdocs.json"
for c in typo:htpp range:http.threads subkey:http.thread type:listen broken:line \
    'conv:converters.application/pdf: a persistent converter' 'convdocs:maxDocuments'; do
    f=${c%%:*} want=${c#*:}
    rc=0; timeout 10 "$SLUICE" serve --config "$TMP/$f.json" --data-dir "$TMP/d" 2>"$TMP/err" || rc=$?
    if [ "$rc" = 2 ] && grep -q "$want" "$TMP/err"; then
        ok "config error '$f' exits 2 naming $want"
    else
        fail "config error '$f': exit $rc, stderr $(cat "$TMP/err")"
    fi
done
rc=0; timeout 10 "$SLUICE" serve --config "$TMP/missing.json" 2>/dev/null || rc=$?
[ "$rc" = 2 ] && ok "missing --config file exits 2" || fail "missing config exit $rc"

# Flags override the file.
write_config "$TMP/config.json" '.listen = "127.0.0.1:1"'
start_server --config "$TMP/config.json" --listen 127.0.0.1:0 --data-dir "$TMP/flagdata"
req GET /smila/
expect_status 200 "--listen overrides the file"
[ -d "$TMP/flagdata/store" ] && ok "--data-dir overrides the file" || fail "--data-dir ignored"
# workers.threads and index.shards follow the cores this process may use:
# threads = cores (2 to 16), shards = cores / 4 (2 to 8); one core (taskset)
n=$(nproc)
want_t=$((n < 2 ? 2 : n > 16 ? 16 : n))
want_s=$((n / 4 < 2 ? 2 : n / 4 > 8 ? 8 : n / 4))
"$SLUICE" serve --help >"$TMP/help" 2>&1 || true
grep -Eq "workers.threads +integer default $want_t " "$TMP/help" &&
    grep -Eq "index.shards +integer default $want_s " "$TMP/help" &&
    ok "defaults from $n cores: workers.threads $want_t, index.shards $want_s" ||
    fail "defaults on $n cores: $(grep -E "workers.threads|index.shards" "$TMP/help")"
if command -v taskset >/dev/null; then
    taskset -c 0 "$SLUICE" serve --help 2>&1 | grep -Eq "workers.threads +integer default 2 " &&
        ok "on one core workers.threads is still 2" || fail "one core: $(taskset -c 0 "$SLUICE" serve --help 2>&1 | grep workers.threads)"
fi

# A second server on the same data directory refuses to start.
rc=0; timeout 10 "$SLUICE" serve --config "$TMP/config.json" --listen 127.0.0.1:0 \
    --data-dir "$TMP/flagdata" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "in use by another process" "$TMP/err" \
    && ok "second server on the same data dir refused" \
    || fail "second server: exit $rc, $(cat "$TMP/err")"
stop_server
finish
