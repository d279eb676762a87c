# The updatePusher over the in-process task context with a real delta
# service, pushing to `remote` with curl_easy_perform and
# curl_easy_getinfo wrapped (every push accepted, or the Nth failed).
find_package(CURL REQUIRED)
sl_add_cmocka_test(test_update_pusher SOURCES unit/test_update_pusher.c
  LINK_LIBRARIES sl_builtin sl_workers sl_deltaservice CURL::libcurl)
target_link_options(test_update_pusher PRIVATE
  -Wl,--wrap=curl_easy_perform -Wl,--wrap=curl_easy_getinfo)
