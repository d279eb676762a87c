#!/bin/bash
# Web import, politeness (issue 6): two hosts (two site servers on two
# ports), one crawl job starting at both, politeness.delayMs 250 and
# maxConnectionsPerHost 1.  From the servers' access logs:
# - per host, no two requests start closer than the delay (a few ms of
#   loopback jitter allowed) and none starts before the previous ended;
# - the hosts are crawled at the same time: while one host waits for its
#   delay the other one's requests go on (most of host B's requests fall
#   between host A's first and last request);
# - robots.txt's Crawl-delay raises one host's gap;
# - with one worker thread per type (the server restarted with
#   workers.threads 1), two hosts with delayMs 400 are still crawled at
#   the same time: a thread never sleeps for one host's delay while the
#   other host's URLs could go.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

DELAY=250
start_site A --pages 12
start_site B --pages 12
start_site C --pages 12 --crawl-delay 0.6
start_site D --pages 12
start_site E --pages 12

start_web_server

define() { # NAME SITE SOURCE [jq filter]: delayMs DELAY, one connection per host
    define_web "$1" "$2" "$3" ".filters.maxSize = 1048576 |
        .politeness = {delayMs: $DELAY, maxConnectionsPerHost: 1} | ${4:-.}"
}

# check_host NAME GAP_MS: the gap over the log, no overlap (gaps.py)
check_host() {
    python3 "$(dirname "$0")/gaps.py" "$TMP/$1.log" "$2" --no-overlap
}

# expect_gaps NAME GAP_MS DESCRIPTION: check_host as one ok/fail line
expect_gaps() {
    local out
    if out=$(check_host "$1" "$2"); then
        ok "$3 ($out)"
    else
        fail "$3: $out"
    fi
}

define twoHosts "$SITE_A" web2 ".startUrl = [\"$SITE_A/\", \"$SITE_B/\"] |
    .filters.urlPatterns.include += [\"^$SITE_B/\"]"
t0=$(date +%s.%N)
expect_crawl twoHosts "crawl of two hosts SUCCEEDED"
t1=$(date +%s.%N)
for h in A B; do
    expect_gaps $h $DELAY "host $h: requests ${DELAY} ms apart over the log, never two at once"
done
# interleaved NAME1 NAME2 PERCENT: at least PERCENT % of host 2's requests
# start while host 1 is being crawled (between its first and last request)
interleaved() {
    python3 - "$TMP/$1.log" "$TMP/$2.log" "$3" <<'EOF'
import sys
a = sorted(float(l.split()[0]) for l in open(sys.argv[1]))
b = sorted(float(l.split()[0]) for l in open(sys.argv[2]))
inside = sum(1 for t in b if a[0] <= t <= a[-1])
print("host 2 requests inside host 1's crawl: %d of %d" % (inside, len(b)))
sys.exit(0 if inside * 100 >= len(b) * int(sys.argv[3]) else 1)
EOF
}
# both hosts at the same time
interleaved A B 50 && ok "while one host waits the other is crawled (requests interleave)" ||
    fail "hosts were not crawled at the same time"
echo "# two hosts: $(wc -l <"$TMP/A.log") + $(wc -l <"$TMP/B.log") requests in $(echo "$t1 - $t0" | bc) s (information, not a check)"

# Crawl-delay 0.6 s of host C raises its gap above delayMs
define crawlDelay "$SITE_C" web3
expect_crawl crawlDelay "crawl of host C SUCCEEDED"
expect_gaps C 600 "host C: robots.txt Crawl-delay 0.6 s is kept"

# one worker thread: the hosts still go at the same time
stop_server
start_web_server '.workers.threads = 1'
DELAY=400
define oneThread "$SITE_D" web4 ".startUrl = [\"$SITE_D/\", \"$SITE_E/\"] |
    .filters.urlPatterns.include += [\"^$SITE_E/\"]"
expect_crawl oneThread "crawl of two hosts on one worker thread SUCCEEDED"
for h in D E; do
    expect_gaps $h $DELAY "one thread, host $h: requests ${DELAY} ms apart over the log"
done
interleaved D E 75 && ok "one thread: while one host waits the other is crawled" ||
    fail "one thread: the hosts were crawled one after the other"

stop_server
finish
