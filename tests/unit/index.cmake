# Embedded full-text index (index/): operations, search, paging, threads.
sl_add_cmocka_test(test_index SOURCES unit/test_index.c
  LINK_LIBRARIES sl_index Threads::Threads TIMEOUT 60)
