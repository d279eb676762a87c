# Embedded index REST API and `sluice search`; documents are seeded with
# sluice-test index-seed.
add_test(NAME it_index COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/index.sh)
set_tests_properties(it_index PROPERTIES TIMEOUT 120
  ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
