# Embedded full-text index (index/): operations, search, paging, threads,
# the FTS table in step with the content (FTS5 integrity check on the
# database file), migration of a schema 2 database.
sl_add_cmocka_test(test_index SOURCES unit/test_index.c
  LINK_LIBRARIES sl_index Threads::Threads PkgConfig::SQLITE TIMEOUT 60)
