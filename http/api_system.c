/*
 * GET /smila/: name, version and links to the sub-resources.
 */
#include "http/http_int.h"

int
sl__api_system_get(struct sl__req *req)
{
    json_t *links = json_array();
    static const char *const subs[] = {
        "jobmanager", "tasks", "importing", "bulkbuilder", "index", "store"};
    size_t i = 0;

    for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        char *path = sl_asprintf("/smila/%s/", subs[i]);
        char *url = sl__req_url(req, path);

        (void)json_array_append_new(
            links, json_pack("{s:s, s:s}", "name", subs[i], "url", url));
        sl_free(url);
        sl_free(path);
    }
    return sl__reply_json(req,
                          200,
                          json_pack("{s:s, s:s, s:o}",
                                    "name",
                                    "sluice",
                                    "version",
                                    SL_VERSION,
                                    "links",
                                    links));
}
