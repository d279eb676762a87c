# text/: persistent converters, with a converter written in the shell
# that misbehaves on request, and Sluice's own sluice-pdf (built beside
# the test binary) on the committed sample PDF.
sl_add_cmocka_test(test_text_helper SOURCES unit/test_text_helper.c
  LINK_LIBRARIES sl_text)
target_compile_definitions(test_text_helper PRIVATE
  SL_TEST_DOCS="${PROJECT_SOURCE_DIR}/tests/docs")
if(TARGET sluice-pdf)
  add_dependencies(test_text_helper sluice-pdf)
endif()
