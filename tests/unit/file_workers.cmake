# The built-in fileCrawler and fileFetcher over the in-process task context
# on a generated tree (5 MiB file included).
sl_add_cmocka_test(test_file_workers SOURCES unit/test_file_workers.c
  LINK_LIBRARIES sl_builtin sl_workers)
