sl_add_cmocka_test(test_core_bulk SOURCES unit/test_core_bulk.c LINK_LIBRARIES sl_core)
