# The worker runtime: task context over the in-process backend.
sl_add_cmocka_test(test_workers SOURCES unit/test_workers.c
  LINK_LIBRARIES sl_workers)
