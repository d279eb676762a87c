# Delta service: operations, crash safety (fork + SIGKILL), threads.
sl_add_cmocka_test(test_delta SOURCES unit/test_delta.c
  LINK_LIBRARIES sl_deltaservice TIMEOUT 60)
sl_add_cmocka_test(test_delta_crash SOURCES unit/test_delta_crash.c
  LINK_LIBRARIES sl_deltaservice PkgConfig::LMDB TIMEOUT 120)
sl_add_cmocka_test(test_delta_mt SOURCES unit/test_delta_mt.c
  LINK_LIBRARIES sl_deltaservice Threads::Threads TIMEOUT 120)
