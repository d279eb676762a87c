# File import end to end with the repository's workflows and jobs; a page
# of tags only does not stay whole in the textExtractor (text_tags); a
# full crawl deletes only after a complete run (completion); documents
# several sources reach and purging a source (sources); the same with two
# web crawls, a zip and its elements, an additive source and kill -9
# during a shared delta-delete (sources_shared); the per-document history
# of runs, one document's state and `sluice job report` (doc_history); the
# client commands of the sluice binary against a server (cli_client);
# GET /metrics during an import, checked by promtool and scraped by a real
# Prometheus (metrics); the dashboard in headless Chromium (dashboard); job
# schedules (schedule); the next checks of a crawl's documents (recheck).
foreach(t import_e2e import_bad_input import_crash import_remote bulkbuilder bulk_intake
    text_tags completion sources sources_shared doc_history cli_client metrics dashboard
    schedule recheck continuous watch)
  add_test(NAME it_${t} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/${t}.sh)
  set_tests_properties(it_${t} PROPERTIES TIMEOUT 300
    ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()
# The same end to end, remote and web imports with records written without
# heads (SLUICE_TEST_NO_HEADS, as bulks of a version before heads): the
# deltaChecker and the updatePusher decode the metadata instead.
foreach(t import_e2e import_remote web_crawl doc_history)
  add_test(NAME it_${t}_noheads
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/${t}.sh)
  set_tests_properties(it_${t}_noheads PROPERTIES TIMEOUT 300
    ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp;SLUICE_TEST_NO_HEADS=1")
endforeach()
# Web import against generated sites on 127.0.0.1 (web_site.py): the
# crawl itself, politeness with two hosts read from the access logs, and
# failing URLs (500, 429 + Retry-After, a stall, a reset, robots.txt that
# times out), and kill -9 during a crawl; compounds extracted by the
# webExtractor (web_extract); sitemaps named by robots.txt (web_sitemaps);
# robots.txt that redirects, Retry-After as an HTTP date (web_robots);
# links past maxCrawlDepth dropped before they are marked visited
# (web_depth); meta robots and X-Robots-Tag noindex/nofollow (web_noindex);
# a full crawl whose start URL fails deletes nothing (web_startfail);
# bodies spooled to temp files: peak RSS with 16 x 5 MiB in flight
# (web_spool); four sitemaps of 50,000 URLs: bounded fds and RSS
# (web_sitemaps_big); sitemaps queued by a retried task (web_sitemaps_retry);
# a compound download without a temporary file fails the task, deletes
# nothing (web_tmpfail); a robots.txt over 512 KiB is parsed from its first
# part (web_robots_big); a compound is extracted only while no other
# download of the task is in flight, so none times out (web_extract_wait);
# the user agent, Retry-After in seconds, redirects to other schemes,
# followRedirects false, the record attributes, robots.txt 404 and 500,
# respectRobots false, contentTypes, mapping, the example job crawlWeb, an
# untrusted HTTPS host, maxConnectionsPerHost, one robots.txt fetch for
# parallel tasks (web_rules); extractText against the textExtractor
# (web_text); HTTPS with a private CA (caFile) and HTTP/2 against nginx,
# certificates and host names verified (web_http2); pages indexed under
# their canonical URL, web documents' url, host and path (web_canonical);
# throttle bins: two jobs sharing a host's budget, a job's rule on the
# fileFetcher, bad rules refused (throttle).
foreach(t web_crawl web_politeness web_failures web_crash web_extract
    web_sitemaps web_robots web_depth web_noindex web_startfail web_spool
    web_sitemaps_big web_sitemaps_retry web_tmpfail web_robots_big
    web_extract_wait web_rules web_text web_http2 web_canonical throttle)
  add_test(NAME it_${t} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/${t}.sh)
  set_tests_properties(it_${t} PROPERTIES TIMEOUT 300
    ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()
# A generated site of a few thousand interlinked pages on two hosts
# (web_site_large.py): the index and the access logs against the plan
# the generator computes; a standard-mode crawl job fed start URLs
# through its bulkbuilder (web_standard).
foreach(t web_site_large web_standard)
  add_test(NAME it_${t} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/${t}.sh)
  set_tests_properties(it_${t} PROPERTIES TIMEOUT 300
    ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()
