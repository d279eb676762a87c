sl_add_cmocka_test(test_jm_engine SOURCES unit/test_jm_engine.c
  LINK_LIBRARIES sl_jobmanager TIMEOUT 60)
sl_add_cmocka_test(test_jm_store SOURCES unit/test_jm_store.c
  LINK_LIBRARIES sl_jobmanager)
