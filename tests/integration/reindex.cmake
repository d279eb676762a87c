# Re-indexing a source (issue 25): clearing a source's delta marks its
# entries for re-push, so the next full crawl pushes everything again and
# still deletes what disappeared (reindex).
add_test(NAME it_reindex COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/reindex.sh)
set_tests_properties(it_reindex PROPERTIES TIMEOUT 300
  ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
