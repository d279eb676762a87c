#!/bin/bash
# updatePusher `remote` (docs/workers.md): server A crawls and pushes over
# HTTP into the indexUpdate job of server B, through an endpoint list whose
# first entry is dead (failover).  Attachments travel as multipart; deletes
# as DELETE ...?_recordid=.  B's index must equal the tree, also after
# deletes and changes.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T/sub" "$TMP/z"
T=$(realpath "$T")
for i in 1 2 3 4 5; do echo "remote uniform $i" >"$T/u$i.txt"; done
printf '<html><head><title>Victor</title></head><body>victor whiskey</body></html>' >"$T/sub/v.html"
echo "xray zipped" >"$TMP/z/x.txt"
(cd "$TMP/z" && zip -q "$T/sub/x.zip" x.txt)

import_config "$TMP/config.json"
# Server B: the receiving side.
start_server --config "$TMP/config.json" --data-dir "$TMP/dataB"
B_PID=$SERVER_PID
B_BASE=$BASE
trap 'rc=$?; kill -KILL "$B_PID" 2>/dev/null || true; cleanup $rc' EXIT
# A port nothing listens on (tcpmux): connections are refused.
DEAD=1
if (exec 3<>/dev/tcp/127.0.0.1/$DEAD) 2>/dev/null; then
    echo "port $DEAD answers here; the failover check needs it closed" >&2
    exit 1
fi
cp "$TMP/server.log" "$TMP/serverB.log"
start_server --config "$TMP/config.json" --data-dir "$TMP/dataA"
B_HOSTPORT=${B_BASE#http://}
define_crawl crawlRemote "$T" remote \
    "{\"jobToPushTo\": null, \"remote\": {\"endpoints\": [\"127.0.0.1:$DEAD\", \"$B_HOSTPORT\"], \"urlPath\": \"/smila/job/indexUpdate/record\"}}"

waitB() { # until B has indexed everything, then snapshot B's index
    local save=$BASE
    BASE=$B_BASE
    wait_indexed || true
    snapshot "$TMP/b.snap"
    BASE=$save
}

want() {
    {
        find "$T" -type f
        [ -f "$T/sub/x.zip" ] && echo "$T/sub/x.zip!/x.txt"
        true
    } | LC_ALL=C sort
}

if crawl crawlRemote; then ok "remote crawl SUCCEEDED"; else fail "remote crawl: $(cat "$TMP/crawl.err")"; fi
[ "$(counter records.pushed)" = 8 ] && ok "8 records pushed over HTTP" || fail "pushed $(counter records.pushed)"
[ "$(counter remote.failovers)" -ge 1 ] && ok "the dead endpoint was failed over" || fail "failovers $(counter remote.failovers)"
waitB
want >"$TMP/want"
ids "$TMP/b.snap" >"$TMP/got"
diff "$TMP/want" "$TMP/got" >"$TMP/diff" && ok "server B's index equals the tree" || fail "B's index: $(cat "$TMP/diff")"
req GET /smila/index/default/
expect_status 404 "server A indexed nothing itself (no index)"
curl -sS -o "$BODY" "$B_BASE/smila/index/default/$(jq -rn --arg id "$T/sub/v.html" '$id|@uri')"
expect_jq '.title == "Victor" and (.text | test("whiskey"))' "the HTML content reached B as an attachment and was extracted"

rm "$T/u1.txt" "$T/sub/x.zip"
echo "remote uniform changed" >"$T/u2.txt"
if crawl crawlRemote; then ok "remote re-crawl SUCCEEDED"; else fail "remote re-crawl failed"; fi
[ "$(counter records.deleted)" = 3 ] && ok "3 deletes sent over HTTP" || fail "deleted $(counter records.deleted)"
waitB
want >"$TMP/want"
ids "$TMP/b.snap" >"$TMP/got"
diff "$TMP/want" "$TMP/got" >"$TMP/diff" && ok "B's index follows deletes and changes" || fail "B's index: $(cat "$TMP/diff")"

# No endpoint reachable: the task is retried, then the run fails; nothing
# is marked updated, so a later crawl pushes again.
define_crawl crawlDead "$T" dead \
    "{\"jobToPushTo\": null, \"remote\": {\"endpoints\": [\"127.0.0.1:$DEAD\"], \"urlPath\": \"smila/job/indexUpdate/record\"}}"
if crawl crawlDead; then fail "a crawl without a reachable endpoint should fail"; else ok "a crawl without a reachable endpoint fails"; fi
jq -e '.tasks.retriedAfterErrorTaskCount > 0' "$RUNJSON" >/dev/null && ok "its push tasks were retried first" ||
    fail "no retries: $(jq -c .tasks "$RUNJSON")"
req GET /smila/importing/delta/dead/
expect_jq '(.entryCount // 0) == 0' "nothing was marked updated"

# A wrong urlPath (404 from B) is the endpoint's fault, not the record's:
# the run fails instead of dropping records silently.
define_crawl crawlWrong "$T" wrong \
    "{\"jobToPushTo\": null, \"remote\": {\"endpoints\": [\"$B_HOSTPORT\"], \"urlPath\": \"smila/job/noSuchJob/record\"}}"
if crawl crawlWrong; then fail "a crawl pushing to a wrong urlPath should fail"; else ok "a crawl pushing to a wrong urlPath fails"; fi
[ "$(counter records.invalid)" = 0 ] && ok "no record was dropped as invalid" || fail "invalid $(counter records.invalid)"

stop_server
kill -TERM "$B_PID"
wait "$B_PID" || true
finish
