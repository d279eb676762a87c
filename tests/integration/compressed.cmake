# Compressed single files and documents served as octet-stream, from disk
# and from the web (issue 27; compressed).
add_test(NAME it_compressed
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/compressed.sh)
set_tests_properties(it_compressed PROPERTIES TIMEOUT 300
  ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
