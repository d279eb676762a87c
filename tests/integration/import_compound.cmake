# A changed zip pushes only its new and changed elements (issue 25): the
# updatePusher checks each element of a changed compound against the
# delta service (import_compound).
add_test(NAME it_import_compound
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/import_compound.sh)
set_tests_properties(it_import_compound PROPERTIES TIMEOUT 300
  ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
