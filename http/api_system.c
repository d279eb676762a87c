/*
 * GET /smila/: name, version and links to the sub-resources.
 */
#include "http/http_int.h"

int
sl_api_system_get(struct sl_req *req)
{
    json_t *links = json_array();
    char *url = sl_req_url(req, "/smila/store/");

    (void)json_array_append_new(
        links, json_pack("{s:s, s:s}", "name", "store", "url", url));
    sl_free(url);
    return sl_reply_json(req,
                         200,
                         json_pack("{s:s, s:s, s:o}",
                                   "name",
                                   "sluice",
                                   "version",
                                   SL_VERSION,
                                   "links",
                                   links));
}
