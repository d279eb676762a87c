# web/: URL normal form, robots.txt, HTML links (also cut into chunks at
# every offset), sitemaps (plain and gzip; zlib writes the gzip input).
sl_add_cmocka_test(test_web SOURCES unit/test_web.c
  LINK_LIBRARIES sl_web PkgConfig::ZLIB)
# core/ throttle bins (the web politeness per host among them): gaps,
# connections per bin, backoff on 429/503, Crawl-delay, a full table, four
# threads with the real clock, the rules and their check.
sl_add_cmocka_test(test_throttle SOURCES unit/test_throttle.c
  LINK_LIBRARIES sl_core Threads::Threads)
