#!/bin/bash
# Web import: one document per page (issue 33), on a generated site
# (web_site.py --canonical):
# 1. a page whose <link rel="canonical"> names another URL of its host is
#    indexed under that URL: /c/dup.html?utm=1 and /c/main.html are one
#    document (/c/main.html), /c/index.html and /c/ one (/c/), whether
#    or not the canonical URL is fetched itself; a canonical URL on
#    another host (/c/other.html) or one the crawl may not fetch
#    (/c/robots.html: robots.txt disallows /private/c.html) leaves the
#    page its own document; a page with meta robots nofollow
#    (/c/nf.html?s=1) is named by its canonical link too, and neither
#    that link nor its body's links are followed;
#    an index page without a canonical link is its directory URL's
#    document when that URL answers the same page (/i/index.html and /i/,
#    /m/default.htm and /m/), and its own when it answers 404 (/j/) or
#    another page (/k/); mergeIndexPages false keeps them apart;
# 2. a web document carries url, host and its URL's path: the hit has
#    them, path: and host: filters and the host facet find it;
# 3. a re-crawl with no change pushes nothing and deletes nothing (the
#    canonical id is the same every time).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

start_site site --pages 6 --canonical
start_web_server
define_web webCanon "$SITE" canon '.deltaImportStrategy = "full"'

# ---- 1. pages under their canonical URL
expect_crawl webCanon "crawl SUCCEEDED"
wait_indexed
site_expected "$SITE" --pages 6 --canonical >"$TMP/want"
expect_index "$TMP/want" "every page once, under its canonical URL ($(wc -l <"$TMP/want") documents)"
[ "$(requests '/c/dup.html?utm=1')" -ge 1 ] && [ "$(requests /c/index.html)" -ge 1 ] &&
    ok "the duplicate URLs were fetched (their canonical link is read from the page)" ||
    fail "requests: dup $(requests '/c/dup.html?utm=1'), index $(requests /c/index.html)"
expect_counter records.canonical = 3 "records.canonical counts the pages written under their canonical URL"
expect_counter records.canonicalOtherHost = 1 "a canonical URL on another host is counted and ignored"
expect_counter records.canonicalRefused = 1 "so is one robots.txt disallows"
expect_requests /private/c.html = 0 "which is not requested"
expect_requests /c/nf.html = 0 "a canonical link under meta robots nofollow is not followed"
expect_requests /c/nf-child.html = 0 "nor are the links of such a page"
expect_counter links.indexProbed = 5 "the directory URL of each index page is asked first (/c/, /i/, /j/, /k/, /m/)"
expect_counter records.indexPage = 2 "two index pages are their directory's document (/i/, /m/)"
expect_counter records.indexPageDiffers = 1 "one answers another page at its directory URL (/k/)"
expect_requests /j/ = 1 "the probe of a directory URL that answers 404 is made once"

# ---- 2. url, host and path of a web document
req GET /smila/index/default/search -G --data-urlencode 'q=india' --data-urlencode 'facets=host'
u="$SITE/c/main.html"
expect_jq ".total == 1 and .hits[0]._recordid == \"$u\" and .hits[0].url == \"$u\" and .hits[0].host == \"127.0.0.1\" and .hits[0].path == \"/c/main.html\"" "the hit has url, host and the URL's path"
expect_jq '.facets.host == [{"value":"127.0.0.1","count":1}]' "the host facet counts it"
req GET /smila/index/default/search -G --data-urlencode 'q=path:/c host:127.0.0.1'
d="$SITE/c/"
expect_jq "[.hits[]._recordid] | sort == ([\"$d\", \"${d}main.html\", \"${d}nf.html\", \"${d}other.html\", \"${d}robots.html\"] | sort)" "path: finds web documents by their URL's folder"
req GET /smila/index/default/search -G --data-urlencode "q=url:$SITE/c/"
expect_jq "[.hits[]._recordid] | sort == ([\"$d\", \"${d}main.html\", \"${d}nf.html\", \"${d}other.html\", \"${d}robots.html\"] | sort)" "url: finds web documents by the start of their URL"
req GET /smila/index/default/search -G --data-urlencode "q=url:$SITE/c/main"
expect_jq "[.hits[]._recordid] == [\"${d}main.html\"]" "url: is a prefix of the URL, not of a folder"
req GET /smila/index/default/search -G --data-urlencode "q=india host:${SITE#http://}"
expect_jq '.total == 1' "host: with the site's port finds it"
req GET /smila/index/default/search -G --data-urlencode 'q=india host:127.0.0.1:1'
expect_jq '.total == 0' "host: with another port does not"
req GET /smila/index/default/search -G --data-urlencode 'q=juliett ext:html'
expect_jq '.total == 0' "the folder URL /c/ has no extension"

# ---- 3. no change
expect_crawl webCanon "re-crawl SUCCEEDED"
expect_counter records.pushed = 0 "a re-crawl with no change pushes nothing"
expect_counter entries.removed = 0 "and deletes nothing"
expect_index "$TMP/want" "the same documents"

# ---- 4. mergeIndexPages false: an index page is its own document
define_web webNoMerge "$SITE" canon '.deltaImportStrategy = "full" | .mergeIndexPages = false'
expect_crawl webNoMerge "crawl without merging index pages SUCCEEDED"
wait_indexed
expect_counter links.indexProbed = 0 "no directory URL is asked"
# (/m/ is linked by nothing else: not seen, so the full run deletes it)
{ grep -vx "$SITE/m/" "$TMP/want"; echo "$SITE/i/index.html"; echo "$SITE/m/default.htm"; } |
    LC_ALL=C sort >"$TMP/want2"
expect_index "$TMP/want2" "/i/index.html and /m/default.htm are documents of their own"

stop_server
finish
