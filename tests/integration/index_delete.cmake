# Deleting an index over REST (issue 25): 409 while an active run's
# indexWriter writes it, 404, 200 with its files gone, recreated empty by
# a later write (index_delete; sluice-test for index-seed).
add_test(NAME it_index_delete COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/index_delete.sh)
set_tests_properties(it_index_delete PROPERTIES TIMEOUT 300
  ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
