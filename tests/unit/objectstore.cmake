# Name checks and the object store (filesystem backend).
sl_add_cmocka_test(test_core_name SOURCES unit/test_core_name.c
  LINK_LIBRARIES sl_core)
sl_add_cmocka_test(test_objectstore SOURCES unit/test_objectstore.c
  LINK_LIBRARIES sl_objectstore)
