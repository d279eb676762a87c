add_test(NAME bulk_cli COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/bulk_cli.sh $<TARGET_FILE:sluice>)
