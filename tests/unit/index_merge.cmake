# Embedded index: merging FTS segments when idle (index/merge.c), issue 33.
sl_add_cmocka_test(test_index_merge SOURCES unit/test_index_merge.c
  LINK_LIBRARIES sl_index Threads::Threads TIMEOUT 120)
