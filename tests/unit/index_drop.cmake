# Embedded index: deleting an index (sl_index_drop) while other threads
# write and query it, issue 25.
sl_add_cmocka_test(test_index_drop SOURCES unit/test_index_drop.c
  LINK_LIBRARIES sl_index Threads::Threads TIMEOUT 120)
