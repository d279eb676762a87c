#!/bin/bash
# Web import end to end (issue 6, first part): the repository's
# webCrawling workflow against a generated site on 127.0.0.1
# (tests/integration/web_site.py, with an access log).
# 1. a crawl with politeness off: every allowed page (cycles, relative
#    links, <base>, fragments, a redirect, non-HTML resources) is in the
#    index exactly once; the redirect loop, the page over maxSize, the 404
#    and the rel=nofollow link are not; nothing under /private/ (robots.txt)
#    was requested, robots.txt was requested once, every page once; the
#    deltaChecker and the webFetcher share bulks of HTML pages they pass
#    on unchanged instead of copying them;
# 2. a re-crawl with no change pushes nothing;
# 3. a changed and a removed page: updated and deleted (strategy full);
# 4. maxCrawlDepth 1 in another source: only the start page and its links;
#    with linksPerBulk 8 (source site2b) the start task writes them in
#    bulks of 1 (an eighth, the ramp-up), so they are two tasks;
# 5. linksPerBulk over the site's size in a third source (one task at a
#    time): a link visited when a page is found is not written, so no URL
#    is written to linksToCrawl twice;
# 6. linksPerBulk 2 in a fourth source (dozens of tasks on 2 crawler and
#    2 fetcher threads, 4 connections per host): each worker thread keeps
#    its connections from task to task, so the site sees at most 16
#    connections, not one set per task;
# 7. linksPerBulk 1 in a fifth source, only / and /p/<i>.html allowed
#    (every page links the next two: two tasks find each page, often at
#    the same time): a link is marked visited before it is written, so
#    each of the 60 pages is written to linksToCrawl exactly once.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

MUTATE="$TMP/mutate.json"
start_site site --mutate-file "$MUTATE"

start_web_server

# ---- 1. initial crawl
define_web web1 "$SITE" site1
expect_crawl web1 "initial web crawl SUCCEEDED"
site_expected "$SITE" >"$TMP/want1"
expect_index "$TMP/want1" "every allowed page and resource is in the index once ($(wc -l <"$TMP/want1"))"
grep -q " /private/" "$SITE_LOG" && fail "a disallowed page was requested: $(grep ' /private/' "$SITE_LOG")" ||
    ok "nothing under /private/ (robots.txt) was requested"
expect_requests /robots.txt = 1 "robots.txt was requested once"
dups=$(awk '$4 != "/robots.txt" && $4 != "/doc.txt" && $4 != "/archive.zip" {print $4}' "$SITE_LOG" | sort | uniq -d)
[ -z "$dups" ] && ok "no page was requested twice (resources with a validator: headers, then content)" || fail "requested twice: $dups"
grep -q " /p/nofollow.html$" "$SITE_LOG" && fail "a rel=nofollow link was followed" ||
    ok "rel=nofollow links are not followed"
expect_counter links.skipped.tooLarge = 1 "the page over maxSize is counted"
expect_counter links.failed.client -ge 1 "the 404 is counted"
expect_counter links.redirected -ge 2 "redirects are followed as links"
shared=$(jq '[.worker["1_deltaChecker"]["bulks.shared"] // 0, .worker["2_webFetcher"]["bulks.shared"] // 0] | min' "$RUNJSON")
[ "$shared" -ge 1 ] &&
    ok "bulks whose records all pass on unchanged are shared, not copied, by the deltaChecker and the webFetcher ($shared or more each)" ||
    fail "bulks.shared: $(jq -c '[.worker[] | .["bulks.shared"]]' "$RUNJSON")"
grep -q " /loop/a$" "$SITE_LOG" && [ "$(requests /loop/a)" = 1 ] &&
    ok "the redirect loop ends at the visited links" ||
    fail "loop requests: $(grep -c ' /loop/' "$SITE_LOG")"
req GET "/smila/jobmanager/jobs/web1/$RUN/"
expect_jq '.state == "SUCCEEDED"' "the run SUCCEEDED with the failures counted"
expect_hit delta "$SITE/doc.txt" "a non-HTML resource is fetched by the webFetcher and its text indexed"
expect_requests /doc.txt = 2 "it was requested twice: headers by the crawler, content by the fetcher"
expect_hit charlie "$SITE/p/sub/b.html" "a page reached through <base> is searchable"

# ---- 2. no change
: >"$SITE_LOG"
expect_crawl web1 "re-crawl SUCCEEDED"
expect_counter records.pushed = 0 "a re-crawl with no change pushes nothing"
expect_counter entries.removed = 0 "and deletes nothing"
expect_requests /doc.txt = 1 "an unchanged resource is not fetched again (headers only)"
expect_requests /robots.txt = 1 "robots.txt is fetched again, once, in the next run"

# ---- 3. changed and removed pages
echo '{"change": ["/p/7.html"], "remove": ["/p/sub/b.html"]}' >"$MUTATE"
expect_crawl web1 "crawl after changes SUCCEEDED"
wait_indexed
snapshot "$TMP/s3"
grep -qF "$SITE/p/sub/b.html" "$TMP/s3" && fail "the removed page is still indexed" ||
    ok "the removed page is deleted from the index"
expect_counter records.pushed = 1 "only the changed page is pushed"
expect_hit changed "$SITE/p/7.html" "the changed page is updated"
rm -f "$MUTATE"

# ---- 4. depth limit
define_web webShallow "$SITE" site2 '.filters.maxCrawlDepth = 1'
: >"$SITE_LOG"
expect_crawl webShallow "shallow crawl SUCCEEDED"
got=$(awk '$4 != "/robots.txt" {print $4}' "$SITE_LOG" | sort -u | tr '\n' ' ')
[ "$got" = "/ /p/0.html /p/1.html " ] && ok "maxCrawlDepth 1: the start page and its links only" ||
    fail "maxCrawlDepth 1 requested: $got"
define_web webRamp "$SITE" site2b '.filters.maxCrawlDepth = 1 | .linksPerBulk = 8'
expect_crawl webRamp "shallow crawl with linksPerBulk 8 SUCCEEDED"
bulks=$(jq '.worker["0_webCrawler"]["output.linksToCrawl.dataObjectCount"]' "$RUNJSON")
tasks=$(jq '.worker["0_webCrawler"].successfulTaskCount' "$RUNJSON")
[ "$bulks" = 2 ] && [ "$tasks" = 3 ] &&
    ok "the start task writes its first links in bulks of linksPerBulk/8 (2 bulks, 3 crawler tasks)" ||
    fail "start task: $bulks link bulks, $tasks crawler tasks (want 2 and 3)"

# ---- 5. links visited already are not written (one task at a time)
define_web webOnce "$SITE" site3 '.linksPerBulk = 1000'
expect_crawl webOnce "crawl with linksPerBulk 1000 SUCCEEDED"
req GET /smila/importing/visitedlinks/site3/
visited=$(jq -r .entryCount "$BODY")
written=$(counter links.found)
echo "# links written $written, URLs visited $visited, links found visited $(counter links.alreadyVisited)"
[ "$written" -gt 0 ] && [ "$written" -lt "$visited" ] &&
    ok "every link written is a URL not visited before ($written written, $visited visited)" ||
    fail "links written $written, URLs visited $visited"
expect_counter links.alreadyVisited -gt 0 "links found visited are counted"

# ---- 6. connections outlive a task
define_web webSmall "$SITE" site4 '.linksPerBulk = 2'
: >"$SITE_LOG.ports"
expect_crawl webSmall "crawl with linksPerBulk 2 SUCCEEDED"
tasks=$(jq '.worker["0_webCrawler"].successfulTaskCount' "$RUNJSON")
conns=$(awk '{print $1}' "$SITE_LOG.ports" | sort -u | wc -l)
echo "# $tasks crawler tasks, $conns connections"
[ "$tasks" -gt 20 ] && [ "$conns" -le 16 ] &&
    ok "connections are reused across tasks ($conns connections for $tasks crawler tasks)" ||
    fail "$conns connections for $tasks crawler tasks"

# ---- 7. each new link written once, also by parallel tasks
define_web webRace "$SITE" site5 \
    '.linksPerBulk = 1 | .filters.urlPatterns.include = ["^" + $site + "/(p/[0-9]+\\.html)?$"]'
expect_crawl webRace "crawl with linksPerBulk 1 SUCCEEDED"
tasks=$(jq '.worker["0_webCrawler"].successfulTaskCount' "$RUNJSON")
req GET /smila/importing/visitedlinks/site5/
visited=$(jq -r .entryCount "$BODY")
echo "# $tasks crawler tasks, links written $(counter links.found), URLs visited $visited"
expect_counter links.found = 60 "each of the 60 pages was written to linksToCrawl once"
[ "$visited" = 61 ] && ok "61 URLs visited: the start page and the 60 written" ||
    fail "visited links: $visited, want 61"
expect_counter records.crawled = 61 "and every one was crawled"

stop_server
finish
