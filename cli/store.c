/*
 * The object store of the configuration on S3, for `sluice serve` and
 * for `sluice worker --config`, which then reads and writes the bulks
 * there itself (docs/deployment.md).
 */
#include <string.h>

#include "cli/cli.h"
#include "objectstore/objectstore.h"

/* Stops a store listing at its first store. */
static int
first_store(void *ctx, const char *store)
{
    (void)ctx;
    (void)store;
    return 1;
}

int
sl_cli_open_s3(const struct sl_cfg *cfg,
               struct sl_obj **out,
               struct sl_err *err)
{
    struct sl_obj_s3_config c;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    c.endpoint = cfg->s3_endpoint;
    c.region = cfg->s3_region;
    c.bucket = cfg->s3_bucket[0] != '\0' ? cfg->s3_bucket : NULL;
    c.prefix = cfg->s3_prefix;
    c.path_style = strcmp(cfg->s3_addressing, "path") == 0;
    c.access_key = cfg->s3_access_key[0] != '\0' ? cfg->s3_access_key : NULL;
    c.secret_key = cfg->s3_secret_key[0] != '\0' ? cfg->s3_secret_key : NULL;
    c.ca_file = cfg->s3_ca_file[0] != '\0' ? cfg->s3_ca_file : NULL;
    c.part_size = cfg->s3_part_mb << 20;
    c.max_retries = (unsigned)cfg->s3_retries;
    rc = sl_obj_open_s3(&c, out, err);
    if (rc == 0) {
        rc = sl_obj_store_list(*out, first_store, NULL, err);
        rc = rc == 1 ? 0 : rc;
        if (rc != 0) {
            sl_obj_close(*out);
            *out = NULL;
        }
    }
    return rc;
}
