# The built-in textExtractor over the in-process task context: plain text
# in several charsets, HTML (also fed in small chunks), XML, external
# converters (tr, cat, sleep, false from coreutils), limits, office
# documents of tests/docs/ (SL_TEST_DOCS) and their metadata.
sl_add_cmocka_test(test_text_extractor SOURCES unit/test_text_extractor.c
  LINK_LIBRARIES sl_builtin sl_workers sl_text sl_web)
target_compile_definitions(test_text_extractor PRIVATE
  SL_TEST_DOCS="${CMAKE_CURRENT_SOURCE_DIR}/docs")
# A TMPDIR of its own: it counts the spool files left there, which the
# tests running beside it must not add to.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/testtmp/text_extractor)
set_tests_properties(test_text_extractor PROPERTIES
  ENVIRONMENT "TMPDIR=${CMAKE_BINARY_DIR}/testtmp/text_extractor")
