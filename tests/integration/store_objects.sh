#!/bin/bash
# Objects of 0 bytes, 10 MiB and 1 GiB through the REST API, streamed in
# both directions; the server's peak RSS must stay under 100 MiB.  Also
# checks that a symlink planted inside the store is never followed, and
# that an uploaded bulk loses its header flag SL_BULK_FLAG_HEADS (its
# record heads come from outside: not trusted), in whatever pieces it
# arrives, while every other byte is kept.
. "$(dirname "$0")/lib.sh"

write_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req PUT /smila/store/big/
expect_status 201 "create store"

# 0 bytes
: >"$TMP/zero"
req PUT /smila/store/big/zero -T "$TMP/zero"
expect_status 201 "put 0 bytes"
req GET /smila/store/big/zero
expect_status 200 "get 0 bytes"
[ ! -s "$BODY" ] && ok "0-byte body is empty" || fail "0-byte body not empty"

# A bulk made by this engine (flag 0x01 at byte 6) comes back with the
# flag cleared and nothing else changed, also when curl sends it in pieces
# of 3 bytes; a body of 5 bytes that starts like a bulk is kept as it is.
printf '{"_recordid":"a","_source":"s","_deltaHash":"h"}\n{"_recordid":"b"}\n' \
    >"$TMP/recs.jsonl"
"$SLUICE" bulk from-jsonl "$TMP/recs.jsonl" "$TMP/recs.bulk"
[ "$(od -An -tx1 -j6 -N1 "$TMP/recs.bulk" | tr -d ' ')" = 01 ] \
    && ok "a new bulk has the heads flag" || fail "no heads flag in a new bulk"
python3 - "$TMP/recs.bulk" "$TMP/recs.want" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[6] &= 0xfe
open(sys.argv[2], "wb").write(b)
PY
for rate in "" 3; do
    if [ -n "$rate" ]; then
        # tiny body pieces: the held-back header crosses them
        python3 - "$TMP/recs.bulk" "$BASE/smila/store/big/recs" <<'PY'
import http.client, sys, urllib.parse
data = open(sys.argv[1], "rb").read()
u = urllib.parse.urlsplit(sys.argv[2])
c = http.client.HTTPConnection(u.hostname, u.port)
c.putrequest("PUT", u.path)
c.putheader("Transfer-Encoding", "chunked")
c.endheaders()
for i in range(0, len(data), 3):
    piece = data[i:i + 3]
    c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
c.send(b"0\r\n\r\n")
r = c.getresponse()
r.read()
sys.exit(0 if r.status in (200, 201) else 1)
PY
        [ $? = 0 ] && ok "bulk put in 3-byte chunks" || fail "chunked put failed"
    else
        req PUT /smila/store/big/recs -T "$TMP/recs.bulk"
        expect_status 201 "put a bulk"
    fi
    req GET /smila/store/big/recs
    cmp -s "$BODY" "$TMP/recs.want" && ok "uploaded bulk: flag cleared, rest kept (${rate:-whole})" \
        || fail "uploaded bulk differs from the bulk without the flag (${rate:-whole})"
done
printf 'SLBK\001' >"$TMP/short"
req PUT /smila/store/big/short -T "$TMP/short"
req GET /smila/store/big/short
cmp -s "$BODY" "$TMP/short" && ok "5-byte body kept" || fail "5-byte body changed"

# 10 MiB of random data
head -c $((10 * 1024 * 1024)) /dev/urandom >"$TMP/ten"
req PUT /smila/store/big/b/ten -T "$TMP/ten"
expect_status 201 "put 10 MiB"
expect_jq ".size == $((10 * 1024 * 1024))" "10 MiB size reported"
req GET /smila/store/big/b/ten
expect_status 200 "get 10 MiB"
cmp -s "$BODY" "$TMP/ten" && ok "10 MiB round trip identical" || fail "10 MiB differs"
grep -qi '^Content-Length: 10485760' "$HEADERS" && ok "Content-Length of the GET" \
    || fail "no Content-Length 10485760"

# 1 GiB from a sparse source, streamed in and out.
truncate -s 1G "$TMP/gig"
printf 'head' | dd of="$TMP/gig" conv=notrunc status=none
printf 'tail' | dd of="$TMP/gig" bs=1 seek=$((1024 * 1024 * 1024 - 4)) conv=notrunc status=none
req PUT /smila/store/big/gig -T "$TMP/gig"
expect_status 201 "put 1 GiB"
expect_jq ".size == 1073741824" "1 GiB size reported"
if curl -sS --fail "$BASE/smila/store/big/gig" | cmp -s - "$TMP/gig"; then
    ok "1 GiB round trip identical"
else
    fail "1 GiB round trip differs"
fi
rss=$(server_peak_rss_kib)
if [ -n "$rss" ] && [ "$rss" -lt $((100 * 1024)) ]; then
    ok "server peak RSS ${rss} KiB < 100 MiB after 1 GiB in and out"
else
    fail "server peak RSS ${rss:-unknown} KiB >= 100 MiB"
fi
req DELETE /smila/store/big/gig
expect_status 200 "delete 1 GiB object"

# A reader never sees half an object: while a slow upload runs, the old
# version stays whole.
req PUT /smila/store/big/slow --data-binary "old"
expect_status 201 "put old version"
head -c $((4 * 1024 * 1024)) /dev/urandom >"$TMP/four"
curl -sS --limit-rate 2M -T "$TMP/four" "$BASE/smila/store/big/slow" >/dev/null &
upload=$!
sleep 0.5
req GET /smila/store/big/slow
[ "$(cat "$BODY")" = "old" ] && ok "old version visible during upload" \
    || fail "during upload GET gave $(head -c 20 "$BODY" | od -c | head -1)"
req GET /smila/store/big/
expect_jq '[.objects[] | select(.id == "slow")][0].size == 3' "listing shows old size during upload"
wait "$upload"
req GET /smila/store/big/slow
cmp -s "$BODY" "$TMP/four" && ok "new version complete after upload" || fail "new version differs"

# An aborted upload leaves nothing.
head -c $((8 * 1024 * 1024)) /dev/urandom >"$TMP/eight"
curl -sS --limit-rate 1M -T "$TMP/eight" "$BASE/smila/store/big/aborted" >/dev/null 2>&1 &
upload=$!
sleep 0.5
kill "$upload" 2>/dev/null || true
wait "$upload" 2>/dev/null || true
sleep 0.3
req GET /smila/store/big/aborted
expect_status 404 "aborted upload is not visible"

# Symlinks planted inside the store are never followed.
mkdir -p "$TMP/outside"
echo secret >"$TMP/outside/secret"
ln -s "$TMP/outside" "$TMP/data/store/big/link"
ln -s "$TMP/outside/secret" "$TMP/data/store/big/filelink"
req GET /smila/store/big/link/secret
[ "${STATUS:0:1}" = 4 ] && ok "GET through a planted dir symlink refused ($STATUS)" \
    || fail "GET through dir symlink gave $STATUS"
req GET /smila/store/big/filelink
[ "${STATUS:0:1}" = 4 ] && ok "GET of a planted file symlink refused ($STATUS)" \
    || fail "GET of file symlink gave $STATUS"
req PUT /smila/store/big/link/new --data-binary "x"
[ "${STATUS:0:1}" = 4 ] && ok "PUT through a planted dir symlink refused ($STATUS)" \
    || fail "PUT through dir symlink gave $STATUS"
[ ! -e "$TMP/outside/new" ] && ok "nothing written outside the store" || fail "file written outside"
req DELETE /smila/store/big/link/secret
[ "${STATUS:0:1}" = 4 ] && ok "DELETE through a planted symlink refused ($STATUS)" \
    || fail "DELETE through symlink gave $STATUS"
[ -f "$TMP/outside/secret" ] && ok "outside file survives" || fail "outside file deleted"
req DELETE /smila/store/big/
expect_status 200 "delete store with planted symlinks"
[ -f "$TMP/outside/secret" ] && ok "outside file survives store delete" \
    || fail "store delete followed the symlink"

stop_server
finish
