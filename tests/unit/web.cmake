# web/: URL normal form, robots.txt, HTML links (also cut into chunks at
# every offset), sitemaps (plain and gzip; zlib writes the gzip input).
sl_add_cmocka_test(test_web SOURCES unit/test_web.c
  LINK_LIBRARIES sl_web PkgConfig::ZLIB)
# web/ politeness table: gaps, connections per host, backoff on 429/503,
# Crawl-delay, a full table, four threads with the real clock.
sl_add_cmocka_test(test_web_hosts SOURCES unit/test_web_hosts.c
  LINK_LIBRARIES sl_web Threads::Threads)
