# The jobmanager definitions registry (jobmanager/defs.c).
sl_add_cmocka_test(test_jm_defs SOURCES unit/test_jm_defs.c
  LINK_LIBRARIES sl_jobmanager)
