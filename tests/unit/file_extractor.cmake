# The built-in fileExtractor over the in-process task context on archives
# built by the test with libarchive's writer API.
find_package(LibArchive REQUIRED)
sl_add_cmocka_test(test_file_extractor SOURCES unit/test_file_extractor.c
  LINK_LIBRARIES sl_builtin sl_workers LibArchive::LibArchive)
