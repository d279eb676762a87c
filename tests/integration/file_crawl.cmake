# The built-in fileCrawler and fileFetcher in a real runOnce job
# (sluice-test serve, workflow in integration/file_crawl/).
add_test(NAME it_file_crawl
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/file_crawl.sh)
set_tests_properties(it_file_crawl PROPERTIES TIMEOUT 180
  ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
