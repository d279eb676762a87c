# Delta service: operations, crash safety (fork + SIGKILL), threads, and
# the visited links (mdb_env_sync wrapped to count syncs).
sl_add_cmocka_test(test_delta SOURCES unit/test_delta.c
  LINK_LIBRARIES sl_deltaservice TIMEOUT 60)
sl_add_cmocka_test(test_delta_crash SOURCES unit/test_delta_crash.c
  LINK_LIBRARIES sl_deltaservice PkgConfig::LMDB TIMEOUT 120)
sl_add_cmocka_test(test_delta_mt SOURCES unit/test_delta_mt.c
  LINK_LIBRARIES sl_deltaservice Threads::Threads TIMEOUT 120)
sl_add_cmocka_test(test_delta_visited SOURCES unit/test_delta_visited.c
  LINK_LIBRARIES sl_deltaservice PkgConfig::LMDB Threads::Threads TIMEOUT 120)
target_link_options(test_delta_visited PRIVATE -Wl,--wrap=mdb_env_sync)
# The next checks of continuous crawls (recheck.c): intervals, the due
# scan, and that a next check goes with its entry.
sl_add_cmocka_test(test_delta_recheck SOURCES unit/test_delta_recheck.c
  LINK_LIBRARIES sl_deltaservice TIMEOUT 60)
