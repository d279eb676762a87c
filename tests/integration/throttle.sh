#!/bin/bash
# Throttle bins (issue 32), against the real server:
# - a server rule (configuration throttle.bins) limits one host to 5
#   requests a second; two crawl jobs of that host, running at the same
#   time with politeness off, share that budget: in the host's access log
#   the requests of both jobs are 200 ms apart on average (one by one
#   they jitter on a loaded machine), and each job fetched every page;
# - a job's own rule (parameter throttle) limits the fileFetcher: 20 files
#   in bins by folder (depth 1: every file of the test's tree is in the
#   bin of the first folder of its path, one bin) at 10 a second take at
#   least 1.9 s, and the fileFetcher counts the time it waited
#   (throttle.waitMs);
# - a job's stricter rule slows that job only: a third job of the host
#   with its own rule of 2 a second, next to a job without one, keeps 500
#   ms between its own requests while the other goes on at the server's 5;
# - a bad rule in a job is refused when the job is defined (400 naming the
#   rule and member), a bad rule in the configuration when the server
#   starts (naming throttle.bins[i].member).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

PAGES=10
start_site A --pages $PAGES --ua-log
start_web_server ".throttle.bins = [{bin: \"$SITE_A\", maxPerSecond: 5}]"

# ---- two jobs, one host, one budget
define_web shareOne "$SITE_A" share1
define_web shareTwo "$SITE_A" share2
req POST /smila/jobmanager/jobs/shareOne/ -d '{"mode": "runOnce"}'
RUN1=$(jq -r .jobId "$BODY")
req POST /smila/jobmanager/jobs/shareTwo/ -d '{"mode": "runOnce"}'
RUN2=$(jq -r .jobId "$BODY")
state_of() { curl -sS "$BASE/smila/jobmanager/jobs/$1/$2/" | jq -r .state; }
both_ended() {
    case "$(state_of shareOne "$RUN1") $(state_of shareTwo "$RUN2")" in
    *RUNNING* | *FINISHING* | *PREPARING*) return 1 ;;
    esac
}
poll 600 0.1 both_ended || true
s1=$(state_of shareOne "$RUN1")
s2=$(state_of shareTwo "$RUN2")
[ "$s1 $s2" = "SUCCEEDED SUCCEEDED" ] && ok "two crawl jobs of one host SUCCEEDED" ||
    fail "the two crawls ended $s1 and $s2"
# every page twice (once per job: each has its own visited links)
pages=$(grep -vc " /robots.txt$" "$SITE_LOG" || true)
want=$(($(site_expected "$SITE_A" --pages $PAGES | wc -l) * 2))
[ "$pages" -ge "$want" ] && ok "each job fetched every page ($pages requests, $want pages)" ||
    fail "$pages page requests, want at least $want"
# The budget over the whole log (gaps.py: one gap in the site's log
# jitters); two jobs with a budget each would take half the time.
python3 "$(dirname "$0")/gaps.py" "$SITE_LOG" 200 >"$TMP/gaps" &&
    ok "the host's budget is shared: 200 ms a request over the log ($(cat "$TMP/gaps"))" ||
    fail "the requests of the host closer than 200 ms on average: $(cat "$TMP/gaps")"
# the two runs overlapped: the budget was shared, not taken in turns
overlap=$(for j in "shareOne $RUN1" "shareTwo $RUN2"; do
    set -- $j
    curl -sS "$BASE/smila/jobmanager/jobs/$1/$2/" | jq -r '[.startTime, .endTime] | @tsv'
done | python3 -c '
import sys, datetime
def t(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
(a0, a1), (b0, b1) = [[t(x) for x in l.split()] for l in sys.stdin]
print("%.1f" % (min(a1, b1) - max(a0, b0)))')
python3 -c "import sys; sys.exit(0 if float('$overlap') > 1 else 1)" &&
    ok "the two runs went on at the same time (${overlap} s together)" ||
    fail "the runs did not overlap (${overlap} s)"

# ---- a job's stricter rule slows that job only
from=$(wc -l <"$SITE_LOG")
define_web slowOne "$SITE_A" share3 ".politeness.userAgent = \"SlowJob/1\"
    | .throttle = [{bin: \"$SITE_A\", maxPerSecond: 2}]"
define_web fastOne "$SITE_A" share4 '.politeness.userAgent = "FastJob/1"'
req POST /smila/jobmanager/jobs/slowOne/ -d '{"mode": "runOnce"}'
RUN1=$(jq -r .jobId "$BODY")
req POST /smila/jobmanager/jobs/fastOne/ -d '{"mode": "runOnce"}'
RUN2=$(jq -r .jobId "$BODY")
two_ended() {
    case "$(state_of slowOne "$RUN1") $(state_of fastOne "$RUN2")" in
    *RUNNING* | *FINISHING* | *PREPARING*) return 1 ;;
    esac
}
poll 900 0.1 two_ended || true
s1=$(state_of slowOne "$RUN1")
s2=$(state_of fastOne "$RUN2")
[ "$s1 $s2" = "SUCCEEDED SUCCEEDED" ] && ok "a job with its own rule and one without SUCCEEDED" ||
    fail "the two crawls ended $s1 and $s2"
python3 - "$SITE_LOG" "$from" <<'EOF' && ok "the job's own rule (2 a second) slowed that job only" ||
import statistics, sys
log = open(sys.argv[1]).read().splitlines()
ua = open(sys.argv[1] + ".ua").read().splitlines()
rows = list(zip(log, ua))[int(sys.argv[2]):]
def starts(tag):
    return sorted(float(l.split()[0]) for l, u in rows if tag in u)
def gaps(t):
    return [b - a for a, b in zip(t, t[1:])]
slow, fast = gaps(starts("SlowJob")), gaps(starts("FastJob"))
print("# slow job: %d gaps, smallest %.3f s, median %.3f s; fast job: %d gaps, median %.3f s"
      % (len(slow), min(slow), statistics.median(slow), len(fast), statistics.median(fast)))
sys.exit(0 if min(slow) >= 0.5 - 0.015 and
         statistics.median(fast) < 0.9 * statistics.median(slow) else 1)
EOF
    fail "the slow job's rule was not kept, or it slowed the other job too"

# ---- a job's rule on the fileFetcher, bins by folder
T="$TMP/tree"
mkdir -p "$T/a" "$T/b"
for i in $(seq 1 10); do
    echo "throttled file a$i" >"$T/a/f$i.txt"
    echo "throttled file b$i" >"$T/b/f$i.txt"
done
T=$(realpath "$T")
define_crawl files "$T" tree "{\"throttleBin\": \"folder\", \"throttleFolderDepth\": 1,
    \"throttle\": [{\"bin\": \"file://*\", \"maxPerSecond\": 10}]}"
t0=$(date +%s.%N)
expect_crawl files "a crawl of 20 files with a job's throttle rule SUCCEEDED"
t1=$(date +%s.%N)
took=$(echo "$t1 - $t0" | bc)
python3 -c "import sys; sys.exit(0 if $took >= 1.9 else 1)" &&
    ok "20 files at 10 a second took ${took} s (at least 1.9)" ||
    fail "20 files at 10 a second took only ${took} s"
expect_counter throttle.waitMs -gt 0 "the fileFetcher waited for its bin (throttle.waitMs)"
expect_counter files.fetched = 20 "every file was fetched"

# ---- bad rules are refused where they are made
define_job badRule fileCrawling "{\"dataSource\": \"bad\", \"rootFolder\": \"$T\",
    \"jobToPushTo\": \"indexUpdate\", \"throttle\": [{\"bin\": \"file://*\", \"maxPerSecond\": 0}]}"
expect_status 400 "a job with maxPerSecond 0 is refused"
jq -e '.error.field == "parameters.throttle[0].maxPerSecond"' "$BODY" >/dev/null &&
    ok "the error names parameters.throttle[0].maxPerSecond" ||
    fail "error: $(cat "$BODY")"
define_job badRule2 fileCrawling "{\"dataSource\": \"bad\", \"rootFolder\": \"$T\",
    \"jobToPushTo\": \"indexUpdate\", \"throttleBin\": \"disk\"}"
expect_status 400 "a job with throttleBin disk is refused"
stop_server
import_config "$TMP/bad.json" '.throttle.bins = [{bin: "*", maxConnections: 0}]'
if "$SLUICE" serve --config "$TMP/bad.json" --data-dir "$TMP/bad" --listen 127.0.0.1:0 \
    >"$TMP/bad.out" 2>&1; then
    fail "the server started with a bad throttle rule"
else
    grep -q "throttle.bins\[0\].maxConnections" "$TMP/bad.out" &&
        ok "the server refuses to start with a bad throttle rule, naming it" ||
        fail "bad config: $(head -c 300 "$TMP/bad.out")"
fi
finish
