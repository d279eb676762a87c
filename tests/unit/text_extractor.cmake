# The built-in textExtractor over the in-process task context: plain text
# in several charsets, HTML (also fed in small chunks), XML, external
# converters (tr, cat, sleep, false from coreutils), limits, office
# documents of tests/docs/ (SL_TEST_DOCS) and their metadata.
sl_add_cmocka_test(test_text_extractor SOURCES unit/test_text_extractor.c
  LINK_LIBRARIES sl_builtin sl_workers sl_text sl_web)
target_compile_definitions(test_text_extractor PRIVATE
  SL_TEST_DOCS="${CMAKE_CURRENT_SOURCE_DIR}/docs")
