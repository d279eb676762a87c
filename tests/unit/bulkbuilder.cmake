sl_add_cmocka_test(test_bulkbuilder SOURCES unit/test_bulkbuilder.c
  LINK_LIBRARIES sl_bulkbuilder Threads::Threads TIMEOUT 180)
