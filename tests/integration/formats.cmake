# The documents people keep, with the default converters (issue 27;
# formats).
add_test(NAME it_formats
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/formats.sh)
set_tests_properties(it_formats PROPERTIES TIMEOUT 300
  ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
