# Documents that lie: corrupt, truncated and hostile files of each format,
# misbehaving converters; the run succeeds in bounded memory (issue 27).
add_test(NAME it_formats_hostile
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/formats_hostile.sh)
set_tests_properties(it_formats_hostile PROPERTIES TIMEOUT 300
  ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
