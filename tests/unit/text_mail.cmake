# text/: mailboxes and messages (GMime) on the committed test documents of
# tests/docs (sample.eml, sample.mbox, made by Python's email module).
sl_add_cmocka_test(test_text_mail SOURCES unit/test_text_mail.c
  LINK_LIBRARIES sl_text)
target_compile_definitions(test_text_mail PRIVATE
  SL_TEST_DOCS="${PROJECT_SOURCE_DIR}/tests/docs")
