/*
 * The REST route table.  Patterns are '/'-separated literals, ":name"
 * (one segment) and "*name" (the rest of the path, slashes included).
 * The server answers 404 when no pattern matches the path and 405 (with
 * Allow) when patterns match but none with the request's method.
 */
#include <stddef.h>

#include "http/http_int.h"

const struct sl_route sl__routes[] = {
    {"GET", "/smila", sl_api_system_get, NULL, NULL, NULL, 0},
    {"GET", "/smila/store", sl_api_stores_get, NULL, NULL, NULL, 0},
    {"PUT", "/smila/store/:store", sl_api_store_put, NULL, NULL, NULL, 0},
    {"GET", "/smila/store/:store", sl_api_store_get, NULL, NULL, NULL, 0},
    {"DELETE", "/smila/store/:store", sl_api_store_delete, NULL, NULL, NULL, 0},
    {"PUT",
     "/smila/store/:store/*id",
     sl_api_object_put,
     sl_api_object_put_begin,
     sl_api_object_put_body,
     sl_api_object_put_cleanup,
     SL_ROUTE_STREAM_BODY},
    {"GET", "/smila/store/:store/*id", sl_api_object_get, NULL, NULL, NULL, 0},
    {"DELETE",
     "/smila/store/:store/*id",
     sl_api_object_delete,
     NULL,
     NULL,
     NULL,
     0},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};
