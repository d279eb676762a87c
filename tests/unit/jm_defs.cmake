# The jobmanager definitions registry (jobmanager/defs.c).
sl_add_cmocka_test(test_jm_defs SOURCES unit/test_jm_defs.c
  LINK_LIBRARIES sl_jobmanager)
# The checks that catch mistakes in definitions (jobmanager/params.c).
sl_add_cmocka_test(test_jm_params SOURCES unit/test_jm_params.c
  LINK_LIBRARIES sl_jobmanager)
