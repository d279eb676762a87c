/*
 * Unit tests for the jobmanager definitions registry (jobmanager/defs*.c):
 * worker descriptions, buckets, workflow rules (each with its field path),
 * job rules, parameter and bucket resolution, read-only and user
 * definitions, delete conflicts and re-validation of dependents, the
 * predefined files and concurrent readers during updates.
 *
 * Test JSON is written with single quotes for readability; jq() turns them
 * into double quotes before parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jobmanager/jobmanager_int.h"
#include "jm_fixture.h"
#include "tmpdir.h"

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

/* Check a result against the expected code, field and message part. */
static void
check_result(const char *what,
             int rc,
             const struct sl_err *err,
             int want_rc,
             const char *want_field,
             const char *want_msg)
{
    if (rc != want_rc) {
        fail_msg("%s: got %s (%s, field '%s'), want %s",
                 what,
                 sl_err_name(rc),
                 err->message,
                 err->field,
                 sl_err_name(want_rc));
    }
    if (rc == 0) {
        return;
    }
    assert_int_equal(err->code, rc);
    if (want_field != NULL && strcmp(err->field, want_field) != 0) {
        fail_msg("%s: field '%s', want '%s' (%s)",
                 what,
                 err->field,
                 want_field,
                 err->message);
    }
    if (want_msg != NULL && strstr(err->message, want_msg) == NULL) {
        fail_msg("%s: message '%s' lacks '%s'", what, err->message, want_msg);
    }
}

static void
put_ok(struct sl__jm_defs *d,
       enum sl__jm_kind kind,
       const char *json,
       int readonly)
{
    struct sl_err err;
    int rc = put(d, kind, json, readonly, &err);

    if (rc != 0) {
        fail_msg("put %s: %s (field %s)", json, err.message, err.field);
    }
}

static const char *
get_str(struct sl__jm_defs *d,
        enum sl__jm_kind kind,
        const char *name,
        const char *path1,
        const char *path2,
        char *buf,
        size_t cap)
{
    json_t *def = sl__jm_defs_get(d, kind, name);
    const json_t *v = json_object_get(def, path1);
    const char *s = NULL;

    if (path2 != NULL) {
        v = json_object_get(v, path2);
    }
    s = json_string_value(v);
    (void)snprintf(buf, cap, "%s", s != NULL ? s : "(null)");
    json_decref(def);
    return buf;
}

/* ------------------------------------------------------------------------
 * Fixture: a registry with test workers and two buckets.
 * --------------------------------------------------------------------- */

static const char *const test_workers[] = {
    /* A crawler: runOnceTrigger, a required and an optional parameter, a
     * "multiple" output and the same kind of loop as SMILA's crawlers. */
    "{'name':'crawler','taskGenerator':'runOnceTrigger',"
    " 'parameters':[{'name':'rootFolder'},"
    "               {'name':'maxDepth','optional':true}],"
    " 'input':[{'name':'dirsIn','type':'recordBulks'}],"
    " 'output':[{'name':'dirsOut','type':'recordBulks',"
    "            'modes':['optional','multiple']},"
    "           {'name':'crawledRecords','type':'recordBulks',"
    "            'modes':['multiple']}]}",
    /* Slot groups A (a1 required, a2 optional) and B (b1 required). */
    "{'name':'splitter','input':[{'name':'input','type':'recordBulks'}],"
    " 'output':[{'name':'main','type':'recordBulks'},"
    "           {'name':'log','type':'recordBulks','modes':['optional']},"
    "           {'name':'a1','type':'recordBulks','group':'A'},"
    "           {'name':'a2','type':'recordBulks','group':'A',"
    "            'modes':['optional']},"
    "           {'name':'b1','type':'recordBulks','group':'B'}]}",
    /* Group C has only optional slots, so no group need be used. */
    "{'name':'splitter2','input':[{'name':'input','type':'recordBulks'}],"
    " 'output':[{'name':'c1','type':'recordBulks','group':'C',"
    "            'modes':['optional']},"
    "           {'name':'d1','type':'recordBulks','group':'D'}]}",
    "{'name':'pusher','modes':['bulkSource','autoCommit'],"
    " 'output':[{'name':'insertedRecords','type':'recordBulks'}]}",
    "{'name':'processor',"
    " 'parameters':[{'name':'pipeline'},"
    "               {'name':'opts','optional':true,'type':'any'},"
    "               {'name':'<extra>','optional':true,'type':'any'}],"
    " 'input':[{'name':'input','type':'recordBulks'}],"
    " 'output':[{'name':'output','type':'recordBulks',"
    "            'modes':['optional']}]}",
    "{'name':'updater','modes':['requestsCompletion'],"
    " 'input':[{'name':'input','type':'recordBulks'}]}",
};

/* The crawl workflow used by the job tests. */
#define WF_CRAWL                                                               \
    "{'name':'crawl',"                                                         \
    " 'startAction':{'worker':'crawler','input':{'dirsIn':'dirs'},"            \
    "   'output':{'dirsOut':'dirs','crawledRecords':'crawled'}},"              \
    " 'actions':[{'worker':'processor','input':{'input':'crawled'},"           \
    "             'output':{'output':'outBucket'}},"                           \
    "            {'worker':'updater','input':{'input':'outBucket'}}]}"

/* The same, with rootFolder from the workflow and pipeline from the action. */
#define WF_CRAWLP                                                              \
    "{'name':'crawlp','parameters':{'rootFolder':'/wf'},"                      \
    " 'startAction':{'worker':'crawler',"                                      \
    "   'output':{'crawledRecords':'crawled'}},"                               \
    " 'actions':[{'worker':'processor','parameters':{'pipeline':'p'},"         \
    "             'input':{'input':'crawled'},"                                \
    "             'output':{'output':'outBucket'}}]}"

struct fixture {
    struct sl__jm_defs *d;
};

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));

    f->d = jm_defs_with_workers(test_workers,
                                sizeof(test_workers) / sizeof(test_workers[0]));
    put_ok(f->d,
           SL__JM_BUCKET,
           "{'name':'inBucket','type':'recordBulks',"
           " 'parameters':{'store':'instore'}}",
           1);
    put_ok(f->d, SL__JM_BUCKET, "{'name':'outBucket','type':'recordBulks'}", 0);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    sl__jm_defs_free(f->d);
    sl_free(f);
    return 0;
}

/* ------------------------------------------------------------------------
 * Worker descriptions.
 * --------------------------------------------------------------------- */

struct parse_case {
    const char *json;
    const char *field; /* expected err.field */
    const char *msg;   /* substring of the message */
};

static void
test_worker_parse_errors(void **state)
{
    static const struct parse_case cases[] = {
        {"[1]", "", "must be a JSON object"},
        {"{}", "name", "no name"},
        {"{'name':'a b'}", "name", "invalid character"},
        {"{'name':'w','modes':['fast']}", "modes[0]", "worker 'w'"},
        {"{'name':'w','modes':'bulkSource'}", "modes", "array"},
        {"{'name':'w','taskGenerator':'magic'}", "taskGenerator", "magic"},
        {"{'name':'w','parameters':{}}", "parameters", "array"},
        {"{'name':'w','parameters':[{'optional':true}]}",
         "parameters[0].name",
         "no name"},
        {"{'name':'w','parameters':[{'name':'p'},{'name':'p'}]}",
         "parameters[1].name",
         "duplicate parameter 'p'"},
        {"{'name':'w','parameters':[{'name':'p','type':'int'}]}",
         "parameters[0].type",
         "unknown type 'int'"},
        {"{'name':'w','parameters':[{'name':'p','optional':'yes'}]}",
         "parameters[0].optional",
         "boolean"},
        {"{'name':'w','parameters':[{'name':'a b'}]}",
         "parameters[0].name",
         "invalid character"},
        {"{'name':'w','input':{}}", "input", "array"},
        {"{'name':'w','input':[{'name':'i'}]}", "input[0].type", "(none)"},
        {"{'name':'w','input':[{'name':'i','type':'other'}]}",
         "input[0].type",
         "unknown type 'other'"},
        {"{'name':'w','input':[{'name':'i','type':'recordBulks',"
         "'modes':['optional']}]}",
         "input[0].modes",
         "takes no modes"},
        {"{'name':'w','input':[{'name':'i/x','type':'recordBulks'}]}",
         "input[0].name",
         "worker 'w'"},
        {"{'name':'w','output':[{'name':'o','type':'recordBulks'},"
         "{'name':'p','type':'recordBulks','modes':['weird']}]}",
         "output[1].modes[0]",
         "unknown mode 'weird'"},
        {"{'name':'w','output':[{'name':'o','type':'recordBulks'},"
         "{'name':'o','type':'recordBulks'}]}",
         "output[1].name",
         "duplicate output slot 'o'"},
        {"{'name':'w','output':[{'name':'o','type':'recordBulks',"
         "'group':1}]}",
         "output[0].group",
         "non-empty string"},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = jq(cases[i].json);
        struct sl__jm_worker *w = NULL;
        struct sl_err err;
        int rc = 0;
        char what[32];

        sl_err_clear(&err);
        rc = sl__jm_worker_parse(j, &w, &err);
        (void)snprintf(what, sizeof(what), "case %zu", i);
        check_result(
            what, rc, &err, SL_EINVALDEF, cases[i].field, cases[i].msg);
        assert_null(w);
        json_decref(j);
    }
}

static void
test_worker_parse_valid(void **state)
{
    json_t *j = jq(test_workers[0]);
    struct sl__jm_worker *w = NULL;
    struct sl_err err;

    (void)state;
    assert_int_equal(sl__jm_worker_parse(j, &w, &err), 0);
    json_decref(j);
    assert_string_equal(w->name, "crawler");
    assert_int_equal(w->generator, SL__JM_GEN_RUN_ONCE_TRIGGER);
    assert_int_equal(w->modes, 0);
    assert_int_equal(w->nparams, 2);
    assert_false(w->params[0].optional);
    assert_true(w->params[1].optional);
    assert_int_equal(w->ninput, 1);
    assert_int_equal(w->noutput, 2);
    assert_int_equal(w->output[0].modes,
                     SL__JM_SLOT_OPTIONAL | SL__JM_SLOT_MULTIPLE);
    assert_int_equal(w->output[1].modes, SL__JM_SLOT_MULTIPLE);
    assert_string_equal(w->output[1].type, "recordBulks");
    assert_null(w->output[1].group);
    assert_null(w->completion_partitions);
    assert_true(json_is_true(json_object_get(w->json, "readOnly")));
    assert_string_equal(
        json_string_value(json_object_get(w->json, "taskGenerator")),
        "runOnceTrigger");
    sl__jm_worker_free(w);

    /* Defaults, modes, groups, "any" parameters, a name used as input and
     * output slot. */
    j = jq("{'name':'w','modes':['bulkSource','requestsCompletion',"
           "'autoCommit'],'parameters':[{'name':'<rest>','type':'any'}],"
           "'input':[{'name':'x','type':'recordBulks'}],"
           "'output':[{'name':'x','type':'recordBulks','group':'g'}],"
           "'comment':'kept'}");
    assert_int_equal(sl__jm_worker_parse(j, &w, &err), 0);
    json_decref(j);
    assert_int_equal(w->modes,
                     SL__JM_WORKER_BULK_SOURCE |
                         SL__JM_WORKER_REQUESTS_COMPLETION |
                         SL__JM_WORKER_AUTO_COMMIT);
    assert_int_equal(w->generator, SL__JM_GEN_DEFAULT);
    assert_int_equal(w->params[0].type, SL__JM_PT_ANY);
    assert_string_equal(w->output[0].group, "g");
    assert_string_equal(
        json_string_value(json_object_get(w->json, "taskGenerator")),
        "default");
    assert_string_equal(json_string_value(json_object_get(w->json, "comment")),
                        "kept");
    sl__jm_worker_free(w);
}

static void
test_workers_registry(void **state)
{
    struct fixture *f = *state;
    json_t *arr = sl__jm_defs_workers_json(f->d);
    json_t *dots = sl__jm_defs_dots_json();
    json_t *j = jq(test_workers[3]);
    struct sl__jm_worker *w = NULL;
    struct sl_err err;
    const struct sl__jm_worker *cw = sl__jm_defs_worker(f->d, "crawler");
    size_t i = 0;

    assert_int_equal(json_array_size(arr), 6);
    for (i = 1; i < json_array_size(arr); i++) {
        const char *a = json_string_value(
            json_object_get(json_array_get(arr, i - 1), "name"));
        const char *b =
            json_string_value(json_object_get(json_array_get(arr, i), "name"));

        assert_true(strcmp(a, b) < 0);
        assert_true(
            json_is_true(json_object_get(json_array_get(arr, i), "readOnly")));
    }
    assert_non_null(cw);
    assert_int_equal(cw->generator, SL__JM_GEN_RUN_ONCE_TRIGGER);
    assert_null(sl__jm_defs_worker(f->d, "nope"));
    assert_int_equal(json_array_size(dots), 1);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(dots, 0), "name")),
        "recordBulks");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_array_get(dots, 0), "transient"), "store")),
        "${tempStore}");
    assert_int_equal(sl__jm_worker_parse(j, &w, &err), 0);
    assert_int_equal(sl__jm_defs_add_worker(f->d, w), SL_EEXIST);
    json_decref(j);
    json_decref(arr);
    json_decref(dots);
}

/* ------------------------------------------------------------------------
 * Buckets and workflows.
 * --------------------------------------------------------------------- */

struct def_case {
    const char *json;
    int rc;
    const char *field;
    const char *msg;
};

static void
run_def_cases(struct sl__jm_defs *d,
              enum sl__jm_kind kind,
              const struct def_case *cases,
              size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        struct sl_err err;
        char what[48];
        int rc = put(d, kind, cases[i].json, 0, &err);

        (void)snprintf(what, sizeof(what), "case %zu", i);
        check_result(what, rc, &err, cases[i].rc, cases[i].field, cases[i].msg);
    }
}

static void
test_bucket_rules(void **state)
{
    static const struct def_case cases[] = {
        {"[]", SL_EINVALDEF, "", "JSON object"},
        {"{'type':'recordBulks'}", SL_EINVALDEF, "name", "no name"},
        {"{'name':'b c','type':'recordBulks'}", SL_EBADNAME, "name", "'b c'"},
        {"{'name':'b'}", SL_EINVALDEF, "type", "bucket 'b': type"},
        {"{'name':'b','type':'nope'}", SL_EINVALDEF, "type", "'nope'"},
        {"{'name':'b','type':'recordBulks','parameters':[]}",
         SL_EINVALDEF,
         "parameters",
         "object"},
        {"{'name':'b','type':'recordBulks','parameters':{'store':1}}",
         SL_EINVALDEF,
         "parameters.store",
         "must be a string"},
        {"{'name':'b','type':'recordBulks','parameters':{'store':'s'}}",
         0,
         NULL,
         NULL},
    };
    struct fixture *f = *state;

    run_def_cases(f->d, SL__JM_BUCKET, cases, sizeof(cases) / sizeof(*cases));
}

/* A workflow: pusher -> b0 -> splitter with the given output map. */
#define GROUPS(out)                                                            \
    "{'name':'g','startAction':{'worker':'pusher',"                            \
    "'output':{'insertedRecords':'b0'}},'actions':[{'worker':'splitter',"      \
    "'input':{'input':'b0'},'output':" out "}]}"
#define GROUPS2(out)                                                           \
    "{'name':'g2','startAction':{'worker':'pusher',"                           \
    "'output':{'insertedRecords':'b0'}},'actions':[{'worker':'splitter2',"     \
    "'input':{'input':'b0'},'output':" out "}]}"
/* A workflow: pusher -> b -> the given action. */
#define ACTION(act)                                                            \
    "{'name':'w','startAction':{'worker':'pusher',"                            \
    "'output':{'insertedRecords':'b'}},'actions':[" act "]}"

static void
test_workflow_slot_groups(void **state)
{
    static const struct def_case cases[] = {
        /* 1: a required groupless slot must be connected. */
        {GROUPS("{'a1':'x'}"),
         SL_EINVALDEF,
         "actions[0].output.main",
         "workflow 'g': action 1 (splitter): output slot 'main' is not "
         "connected"},
        {GROUPS("{'main':'m','a1':'x'}"), 0, NULL, NULL},
        /* 2: an optional groupless slot goes with any group. */
        {GROUPS("{'main':'m','a1':'x','log':'l'}"), 0, NULL, NULL},
        {GROUPS("{'main':'m','b1':'y','log':'l'}"), 0, NULL, NULL},
        /* 3: a used group is complete. */
        {GROUPS("{'main':'m','a2':'x'}"),
         SL_EINVALDEF,
         "actions[0].output.a1",
         "because group 'A' is used"},
        {GROUPS("{'main':'m','a1':'x','a2':'y'}"), 0, NULL, NULL},
        /* 4: groups are not mixed. */
        {GROUPS("{'main':'m','a1':'x','b1':'y'}"),
         SL_EINVALDEF,
         "actions[0].output.b1",
         "cannot be combined with group 'A'"},
        {GROUPS("{'main':'m','b1':'y'}"), 0, NULL, NULL},
        /* 5: every group has a required slot: one group must be used. */
        {GROUPS("{'main':'m','log':'l'}"),
         SL_EINVALDEF,
         "actions[0].output",
         "one of the output slot groups 'A', 'B' must be connected"},
        {GROUPS2("{}"), 0, NULL, NULL},
        {GROUPS2("{'c1':'c'}"), 0, NULL, NULL},
        {GROUPS2("{'c1':'c','d1':'d'}"),
         SL_EINVALDEF,
         "actions[0].output.d1",
         "cannot be combined"},
    };
    struct fixture *f = *state;

    run_def_cases(f->d, SL__JM_WORKFLOW, cases, sizeof(cases) / sizeof(*cases));
}

/* Workflow rules other than slot groups, each with its field path. */
static const struct def_case workflow_cases[] = {
    {"{'name':'bad name','startAction':{'worker':'pusher'}}",
     SL_EBADNAME,
     "name",
     NULL},
    {"{'name':'w'}", SL_EINVALDEF, "startAction", "startAction"},
    {"{'name':'w','startAction':{}}",
     SL_EINVALDEF,
     "startAction.worker",
     "worker is required"},
    {"{'name':'w','startAction':{'worker':'nope'}}",
     SL_EINVALDEF,
     "startAction.worker",
     "workflow 'w': start action (nope): unknown worker 'nope'"},
    {"{'name':'w','modes':['fast'],'startAction':{'worker':'pusher'}}",
     SL_EINVALDEF,
     "modes[0]",
     "unknown mode 'fast'"},
    {"{'name':'w','modes':[],'startAction':{'worker':'pusher'}}",
     SL_EINVALDEF,
     "modes",
     "non-empty"},
    {"{'name':'w','modes':['standard','standard'],"
     "'startAction':{'worker':'pusher'}}",
     SL_EINVALDEF,
     "modes[1]",
     "duplicate"},
    {"{'name':'w','parameters':[],'startAction':{'worker':'pusher'}}",
     SL_EINVALDEF,
     "parameters",
     "object"},
    {"{'name':'w','startAction':{'worker':'pusher',"
     "'output':{'insertedRecords':'b'}},'actions':{}}",
     SL_EINVALDEF,
     "actions",
     "array"},
    {ACTION("{'worker':'processor','input':{'input':'b','bogus':'c'}}"),
     SL_EINVALDEF,
     "actions[0].input.bogus",
     "worker 'processor' has no input slot 'bogus'"},
    {ACTION("{'worker':'processor','input':{'input':'b'},"
            "'output':{'out':'c'}}"),
     SL_EINVALDEF,
     "actions[0].output.out",
     "no output slot 'out'"},
    {ACTION("{'worker':'processor','input':{'input':'b c'}}"),
     SL_EINVALDEF,
     "actions[0].input.input",
     "invalid character"},
    {ACTION("{'worker':'processor','input':{'input':'b'},'output':[]}"),
     SL_EINVALDEF,
     "actions[0].output",
     "must be an object"},
    /* Inputs must be connected, except at a bulkSource/crawler start. */
    {ACTION("{'worker':'processor'}"),
     SL_EINVALDEF,
     "actions[0].input.input",
     "workflow 'w': action 1 (processor): input slot 'input' is not "
     "connected"},
    {"{'name':'w','modes':['standard'],"
     "'startAction':{'worker':'processor'}}",
     SL_EINVALDEF,
     "startAction.input.input",
     "is not connected"},
    {"{'name':'w','startAction':{'worker':'crawler',"
     "'output':{'crawledRecords':'c'}}}",
     0,
     NULL,
     NULL},
    {ACTION("{'worker':'processor','input':{'input':'b'}},"
            "{'worker':'crawler','output':{'crawledRecords':'c'}}"),
     SL_EINVALDEF,
     "actions[1].input.dirsIn",
     "action 2 (crawler): input slot 'dirsIn' is not connected"},
    /* A bulkSource worker only starts a workflow. */
    {ACTION("{'worker':'pusher','output':{'insertedRecords':'x'}}"),
     SL_EINVALDEF,
     "actions[0].worker",
     "bulkSource"},
    /* Transient start bucket in a workflow that allows runOnce. */
    {"{'name':'w','startAction':{'worker':'processor',"
     "'input':{'input':'tb'}}}",
     SL_EINVALDEF,
     "startAction.input.input",
     "transient bucket 'tb' cannot be a runOnce start bucket"},
    {"{'name':'w','modes':['standard','runOnce'],"
     "'startAction':{'worker':'processor','input':{'input':'tb'}}}",
     SL_EINVALDEF,
     "startAction.input.input",
     "runOnce start bucket"},
    {"{'name':'w','modes':['standard'],'startAction':"
     "{'worker':'processor','input':{'input':'tb'}}}",
     0,
     NULL,
     NULL},
    {"{'name':'w','startAction':{'worker':'processor',"
     "'input':{'input':'inBucket'}}}",
     0,
     NULL,
     NULL},
    {"{'name':'w','startAction':{'worker':'crawler',"
     "'input':{'dirsIn':'tb'},'output':{'crawledRecords':'c'}}}",
     0,
     NULL,
     NULL},
    /* Declared non-"any" action parameters are scalars. */
    {"{'name':'w','startAction':{'worker':'crawler',"
     "'parameters':{'rootFolder':{'a':1}},"
     "'output':{'crawledRecords':'c'}}}",
     SL_EINVALDEF,
     "startAction.parameters.rootFolder",
     "must be a string, number or boolean"},
    {ACTION("{'worker':'processor','input':{'input':'b'},"
            "'parameters':{'opts':{'a':[1]},'free':[2],'pipeline':3}}"),
     0,
     NULL,
     NULL},
    /* requestsCompletion workers are ordinary actions. */
    {ACTION("{'worker':'updater','input':{'input':'b'}}"), 0, NULL, NULL},
};

static void
test_workflow_rules(void **state)
{
    struct fixture *f = *state;

    run_def_cases(f->d,
                  SL__JM_WORKFLOW,
                  workflow_cases,
                  sizeof(workflow_cases) / sizeof(*workflow_cases));
}

/* ------------------------------------------------------------------------
 * Jobs and resolution.
 * --------------------------------------------------------------------- */

#define FULL_PARAMS                                                            \
    "'rootFolder':'/r','pipeline':'p','tempStore':'tmp','store':'out'"

static void
test_job_rules(void **state)
{
    static const struct def_case cases[] = {
        {"{'name':'j b','workflow':'crawl'}", SL_EBADNAME, "name", NULL},
        {"{'name':'j'}", SL_EINVALDEF, "workflow", "workflow is required"},
        {"{'name':'j','workflow':'none'}",
         SL_EINVALDEF,
         "workflow",
         "job 'j': workflow 'none' is not defined"},
        {"{'name':'j','workflow':'crawl','parameters':[]}",
         SL_EINVALDEF,
         "parameters",
         "object"},
        {"{'name':'j','workflow':'crawl','autoStart':'yes',"
         "'parameters':{" FULL_PARAMS "}}",
         SL_EINVALDEF,
         "autoStart",
         "boolean"},
        {"{'name':'j','workflow':'crawl','autoStart':true,"
         "'parameters':{" FULL_PARAMS "}}",
         0,
         NULL,
         NULL},
        {"{'name':'j','workflow':'crawl','parameters':{'pipeline':'p',"
         "'tempStore':'t','store':'s'}}",
         SL_EINVALDEF,
         "parameters.rootFolder",
         "job 'j': worker 'crawler' (start action) needs parameter "
         "'rootFolder'"},
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'tempStore':'t','store':'s'}}",
         SL_EINVALDEF,
         "parameters.pipeline",
         "worker 'processor' (action 1) needs parameter 'pipeline'"},
        /* A worker-prefixed key satisfies its worker only. */
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'processor.pipeline':'p','tempStore':'t','store':'s'}}",
         0,
         NULL,
         NULL},
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'crawler.pipeline':'p','tempStore':'t','store':'s'}}",
         SL_EINVALDEF,
         "parameters.pipeline",
         "needs parameter 'pipeline'"},
        /* Workflow and action parameters count. */
        {"{'name':'j','workflow':'crawlp','parameters':{'tempStore':'t',"
         "'store':'s'}}",
         0,
         NULL,
         NULL},
        /* Types: declared non-"any" parameters are scalars. */
        {"{'name':'j','workflow':'crawl','parameters':{" FULL_PARAMS
         ",'maxDepth':{'x':1}}}",
         SL_EINVALDEF,
         "parameters.maxDepth",
         "parameter 'maxDepth' of worker 'crawler' (start action) must be a "
         "string, number or boolean"},
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'tempStore':'t','store':'s','processor.pipeline':[1]}}",
         SL_EINVALDEF,
         "parameters.processor.pipeline",
         "must be a string"},
        {"{'name':'j','workflow':'crawl','parameters':{" FULL_PARAMS
         ",'opts':{'x':1},'other':[1],'maxDepth':3}}",
         0,
         NULL,
         NULL},
        /* Stores. */
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'pipeline':'p','store':'s'}}",
         SL_EINVALDEF,
         "parameters.tempStore",
         "job 'j': bucket 'dirs': parameter 'tempStore' is not set"},
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'pipeline':'p','tempStore':'t'}}",
         SL_EINVALDEF,
         "parameters.store",
         "bucket 'outBucket': parameter 'store' is not set"},
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'pipeline':'p','tempStore':'t','store':'bad_store'}}",
         SL_EINVALDEF,
         "parameters.store",
         "store name 'bad_store' is invalid"},
        {"{'name':'j','workflow':'crawl','parameters':{'rootFolder':'/r',"
         "'pipeline':'p','tempStore':{'a':1},'store':'s'}}",
         SL_EINVALDEF,
         "parameters.tempStore",
         "parameter 'tempStore' must be a string"},
    };
    struct fixture *f = *state;

    put_ok(f->d, SL__JM_WORKFLOW, WF_CRAWL, 0);
    put_ok(f->d, SL__JM_WORKFLOW, WF_CRAWLP, 0);
    run_def_cases(f->d, SL__JM_JOB, cases, sizeof(cases) / sizeof(*cases));
}

static void
assert_param(const json_t *params, const char *key, const char *want)
{
    const char *got = json_string_value(json_object_get(params, key));

    if (want == NULL && json_object_get(params, key) != NULL) {
        fail_msg("parameter '%s' should be absent", key);
    }
    if (want != NULL && (got == NULL || strcmp(got, want) != 0)) {
        fail_msg("parameter '%s' is '%s', want '%s'",
                 key,
                 got != NULL ? got : "(none)",
                 want);
    }
}

static void
test_task_params_order(void **state)
{
    json_t *wf = jq("{'name':'res','parameters':{'a':'wf','f':'wf'},"
                    "'startAction':{'worker':'crawler'},"
                    "'actions':[{'worker':'processor','parameters':"
                    "{'a':'act'}}]}");
    json_t *job = jq("{'name':'jr','workflow':'res','parameters':{"
                     "'a':'job','b':'job','processor.b':'jobp',"
                     "'crawler.c':'crawl','x.y':'keep','processor.d':'pd',"
                     "'processor.f':'jp','obj':{'k':1}}}");
    json_t *proc = sl__jm_task_params(
        job, wf, json_array_get(json_object_get(wf, "actions"), 0));
    json_t *crawl =
        sl__jm_task_params(job, wf, json_object_get(wf, "startAction"));
    json_t *nojob = sl__jm_task_params(NULL, NULL, NULL);

    (void)state;
    /* processor: action > workflow > "processor.x" > plain job keys. */
    assert_param(proc, "a", "act");
    assert_param(proc, "b", "jobp");
    assert_param(proc, "d", "pd");
    assert_param(proc, "f", "wf");
    assert_param(proc, "x.y", "keep");
    assert_param(proc, "c", NULL);
    assert_param(proc, "crawler.c", NULL);
    assert_param(proc, "processor.b", NULL);
    /* crawler sees its own keys, not the processor's. */
    assert_param(crawl, "a", "wf");
    assert_param(crawl, "b", "job");
    assert_param(crawl, "c", "crawl");
    assert_param(crawl, "d", NULL);
    assert_param(crawl, "processor.d", NULL);
    assert_param(crawl, "x.y", "keep");
    /* Values are copies. */
    assert_non_null(json_object_get(proc, "obj"));
    assert_ptr_not_equal(
        json_object_get(proc, "obj"),
        json_object_get(json_object_get(job, "parameters"), "obj"));
    assert_int_equal(json_object_size(nojob), 0);
    json_decref(nojob);
    json_decref(proc);
    json_decref(crawl);
    json_decref(job);
    json_decref(wf);
}

static void
test_bucket_resolve(void **state)
{
    struct fixture *f = *state;
    json_t *wf = jq("{'name':'r','parameters':{'store':'wfstore'},"
                    "'startAction':{'worker':'crawler',"
                    "'output':{'crawledRecords':'crawled'}},"
                    "'actions':[{'worker':'processor','input':{'input':"
                    "'crawled'},'output':{'output':'outBucket'}}]}");
    json_t *job = jq("{'name':'j','workflow':'r','parameters':{"
                     "'store':'jobstore','tempStore':'jobtmp'}}");
    struct sl__jm_bucket_info info;
    struct sl_err err;

    (void)state;
    /* Bucket parameters win over workflow and job. */
    assert_int_equal(
        sl__jm_bucket_resolve(f->d, job, wf, "inBucket", &info, &err), 0);
    assert_string_equal(info.store, "instore");
    assert_string_equal(info.name, "inBucket");
    assert_true(info.persistent);
    /* Then workflow parameters. */
    assert_int_equal(
        sl__jm_bucket_resolve(f->d, job, wf, "outBucket", &info, &err), 0);
    assert_string_equal(info.store, "wfstore");
    /* Transient: tempStore from the job when the workflow has none. */
    assert_int_equal(
        sl__jm_bucket_resolve(f->d, job, wf, "crawled", &info, &err), 0);
    assert_string_equal(info.store, "jobtmp");
    assert_false(info.persistent);
    (void)json_object_set_new(
        json_object_get(wf, "parameters"), "tempStore", json_string("wftmp"));
    assert_int_equal(
        sl__jm_bucket_resolve(f->d, job, wf, "crawled", &info, &err), 0);
    assert_string_equal(info.store, "wftmp");
    /* Job store when the workflow has none. */
    (void)json_object_del(json_object_get(wf, "parameters"), "store");
    assert_int_equal(
        sl__jm_bucket_resolve(f->d, job, wf, "outBucket", &info, &err), 0);
    assert_string_equal(info.store, "jobstore");
    /* A transient bucket the workflow does not use has no type. */
    assert_int_equal(
        sl__jm_bucket_resolve(f->d, job, wf, "nowhere", &info, &err),
        SL_EINVALDEF);
    assert_non_null(strstr(err.message, "not used by workflow 'r'"));
    json_decref(wf);
    json_decref(job);
}

/* ------------------------------------------------------------------------
 * Registry behaviour.
 * --------------------------------------------------------------------- */

static void
test_readonly_and_user(void **state)
{
    struct fixture *f = *state;
    json_t *def = NULL;
    json_t *stored = NULL;
    json_t *list = NULL;
    struct sl_err err;
    int rc = 0;
    char buf[64];

    def = sl__jm_defs_get(f->d, SL__JM_BUCKET, "inBucket");
    assert_true(json_is_true(json_object_get(def, "readOnly")));
    assert_null(json_object_get(def, "timestamp"));
    /* The getter hands out a copy. */
    (void)json_object_set_new(def, "type", json_string("changed"));
    json_decref(def);
    assert_string_equal(
        get_str(f->d, SL__JM_BUCKET, "inBucket", "type", NULL, buf, 64),
        "recordBulks");

    def = sl__jm_defs_get(f->d, SL__JM_BUCKET, "outBucket");
    assert_true(json_is_false(json_object_get(def, "readOnly")));
    assert_true(json_string_length(json_object_get(def, "timestamp")) >= 20);
    json_decref(def);

    def = jq("{'name':'extra','type':'recordBulks','comment':'kept',"
             "'readOnly':true,'timestamp':'forged'}");
    assert_int_equal(
        sl__jm_defs_put(f->d, SL__JM_BUCKET, def, 0, &stored, &err), 0);
    assert_true(json_is_false(json_object_get(stored, "readOnly")));
    assert_string_not_equal(
        json_string_value(json_object_get(stored, "timestamp")), "forged");
    assert_string_equal(json_string_value(json_object_get(stored, "comment")),
                        "kept");
    json_decref(stored);
    json_decref(def);

    rc = put(f->d,
             SL__JM_BUCKET,
             "{'name':'inBucket','type':'recordBulks'}",
             0,
             &err);
    check_result(
        "put over predefined", rc, &err, SL_EREADONLY, "name", "predefined");
    sl_err_clear(&err);
    rc = sl__jm_defs_delete(f->d, SL__JM_BUCKET, "inBucket", &err);
    check_result("delete predefined", rc, &err, SL_EREADONLY, "name", NULL);
    sl_err_clear(&err);
    rc = sl__jm_defs_delete(f->d, SL__JM_BUCKET, "nope", &err);
    check_result("delete unknown", rc, &err, SL_ENOENT, "name", "'nope'");
    assert_null(sl__jm_defs_get(f->d, SL__JM_BUCKET, "nope"));
    assert_null(sl__jm_defs_get(f->d, SL__JM_WORKFLOW, "inBucket"));

    list = sl__jm_defs_list(f->d, SL__JM_BUCKET);
    assert_int_equal(json_array_size(list), 3);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(list, 0), "name")),
        "extra");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(list, 2), "name")),
        "outBucket");
    json_decref(list);
    list = sl__jm_defs_list(f->d, SL__JM_JOB);
    assert_int_equal(json_array_size(list), 0);
    json_decref(list);
}

static void
test_delete_conflicts(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;
    int rc = 0;
    json_t *def = NULL;

    put_ok(f->d, SL__JM_WORKFLOW, WF_CRAWL, 0);
    put_ok(f->d,
           SL__JM_JOB,
           "{'name':'j','workflow':'crawl','parameters':{" FULL_PARAMS "}}",
           0);
    sl_err_clear(&err);
    rc = sl__jm_defs_delete(f->d, SL__JM_WORKFLOW, "crawl", &err);
    check_result("workflow used",
                 rc,
                 &err,
                 SL_ECONFLICT,
                 "name",
                 "workflow 'crawl' is used by job 'j'");
    sl_err_clear(&err);
    rc = sl__jm_defs_delete(f->d, SL__JM_BUCKET, "outBucket", &err);
    check_result("bucket used",
                 rc,
                 &err,
                 SL_ECONFLICT,
                 "name",
                 "bucket 'outBucket' is used by job 'j'");
    assert_int_equal(sl__jm_defs_delete(f->d, SL__JM_JOB, "j", &err), 0);
    assert_int_equal(sl__jm_defs_delete(f->d, SL__JM_WORKFLOW, "crawl", &err),
                     0);
    assert_int_equal(sl__jm_defs_delete(f->d, SL__JM_BUCKET, "outBucket", &err),
                     0);

    /* A workflow without jobs that needs the bucket to be persistent. */
    put_ok(f->d, SL__JM_BUCKET, "{'name':'src','type':'recordBulks'}", 0);
    put_ok(f->d,
           SL__JM_WORKFLOW,
           "{'name':'fromSrc','startAction':{'worker':'processor',"
           "'input':{'input':'src'}}}",
           0);
    sl_err_clear(&err);
    rc = sl__jm_defs_delete(f->d, SL__JM_BUCKET, "src", &err);
    check_result("bucket needed",
                 rc,
                 &err,
                 SL_ECONFLICT,
                 "",
                 "workflow 'fromSrc' would become invalid");
    def = sl__jm_defs_get(f->d, SL__JM_BUCKET, "src");
    assert_non_null(def);
    json_decref(def);
}

static void
test_revalidate_dependents(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;
    int rc = 0;
    char buf[64];

    /* Workflow update that would break a job. */
    put_ok(f->d, SL__JM_WORKFLOW, WF_CRAWLP, 0);
    put_ok(f->d,
           SL__JM_JOB,
           "{'name':'jp','workflow':'crawlp','parameters':{'tempStore':'t',"
           "'store':'s'}}",
           0);
    rc = put(f->d,
             SL__JM_WORKFLOW,
             "{'name':'crawlp','startAction':{'worker':'crawler',"
             "'output':{'crawledRecords':'crawled'}}}",
             0,
             &err);
    check_result("workflow update",
                 rc,
                 &err,
                 SL_EINVALDEF,
                 NULL,
                 "workflow 'crawlp': job 'jp' would become invalid: job "
                 "'jp': worker 'crawler' (start action) needs parameter "
                 "'rootFolder'");
    assert_string_equal(get_str(f->d,
                                SL__JM_WORKFLOW,
                                "crawlp",
                                "parameters",
                                "rootFolder",
                                buf,
                                sizeof(buf)),
                        "/wf");
    /* A compatible update goes through. */
    put_ok(f->d,
           SL__JM_WORKFLOW,
           "{'name':'crawlp','parameters':{'rootFolder':'/x'},"
           "'startAction':{'worker':'crawler',"
           "'output':{'crawledRecords':'crawled'}}}",
           0);

    /* Bucket update that would take away a job's store. */
    put_ok(f->d,
           SL__JM_BUCKET,
           "{'name':'out2','type':'recordBulks','parameters':{'store':'o2'}}",
           0);
    put_ok(f->d,
           SL__JM_WORKFLOW,
           "{'name':'w2','startAction':{'worker':'crawler',"
           "'output':{'crawledRecords':'out2','dirsOut':'tmpb'}}}",
           0);
    put_ok(f->d,
           SL__JM_JOB,
           "{'name':'j2','workflow':'w2','parameters':{'rootFolder':'/r',"
           "'tempStore':'t'}}",
           0);
    rc = put(
        f->d, SL__JM_BUCKET, "{'name':'out2','type':'recordBulks'}", 0, &err);
    check_result("bucket update",
                 rc,
                 &err,
                 SL_EINVALDEF,
                 NULL,
                 "bucket 'out2': job 'j2' would become invalid");
    assert_string_equal(get_str(f->d,
                                SL__JM_BUCKET,
                                "out2",
                                "parameters",
                                "store",
                                buf,
                                sizeof(buf)),
                        "o2");
    put_ok(f->d,
           SL__JM_BUCKET,
           "{'name':'out2','type':'recordBulks','parameters':{'store':'o3'}}",
           0);
    /* A new bucket turns transient 'tmpb' persistent: it needs a store. */
    rc = put(
        f->d, SL__JM_BUCKET, "{'name':'tmpb','type':'recordBulks'}", 0, &err);
    check_result("new bucket",
                 rc,
                 &err,
                 SL_EINVALDEF,
                 NULL,
                 "job 'j2' would become invalid");
    assert_null(sl__jm_defs_get(f->d, SL__JM_BUCKET, "tmpb"));
    put_ok(f->d,
           SL__JM_BUCKET,
           "{'name':'tmpb','type':'recordBulks','parameters':{'store':'tb'}}",
           0);
}

/* ------------------------------------------------------------------------
 * Files.
 * --------------------------------------------------------------------- */

static void
write_file(const char *dir, const char *name, const char *text)
{
    char *path = sl_asprintf("%s/%s", dir, name);
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    assert_true(fputs(text, fp) >= 0);
    assert_int_equal(fclose(fp), 0);
    sl_free(path);
}

static void
remove_file(const char *dir, const char *name)
{
    char *path = sl_asprintf("%s/%s", dir, name);

    assert_int_equal(unlink(path), 0);
    sl_free(path);
}

static int
is_readonly(struct sl__jm_defs *d, enum sl__jm_kind kind, const char *name)
{
    json_t *def = sl__jm_defs_get(d, kind, name);
    int ro = json_is_true(json_object_get(def, "readOnly"));

    json_decref(def);
    return ro;
}

static void
test_load_files(void **state)
{
    struct fixture *f = *state;
    char dir[512];
    char *wfdir = NULL;

    assert_non_null(tmpdir_make(dir, sizeof(dir), "jmdefs"));
    wfdir = sl_asprintf("%s/workflows", dir);
    assert_int_equal(mkdir(wfdir, 0700), 0);
    write_file(dir,
               "buckets.json",
               "{\"buckets\":[{\"name\":\"fileBucket\",\"type\":"
               "\"recordBulks\",\"parameters\":{\"store\":\"fstore\"}},"
               "{\"name\":\"badBucket\",\"type\":\"nope\"}]}");
    write_file(wfdir, "a-broken.json", "{ \"name\": \"broken\",\n  oops }");
    write_file(wfdir,
               "b-multi.json",
               "{\"workflows\":[{\"name\":\"badWf\",\"startAction\":"
               "{\"worker\":\"nope\"}},{\"name\":\"fileWf\",\"startAction\":"
               "{\"worker\":\"crawler\",\"output\":{\"crawledRecords\":"
               "\"fileBucket\"}}}]}");
    write_file(wfdir,
               "c-single.json",
               "{\"name\":\"singleWf\",\"startAction\":{\"worker\":"
               "\"pusher\",\"output\":{\"insertedRecords\":\"x\"}}}");
    write_file(wfdir, "notes.txt", "not a workflow");
    write_file(dir,
               "jobs.json",
               "{\"jobs\":[{\"name\":\"fileJob\",\"workflow\":\"fileWf\","
               "\"parameters\":{\"rootFolder\":\"/r\"}},"
               "{\"name\":\"orphan\",\"workflow\":\"missingWf\"}]}");

    assert_int_equal(sl__jm_defs_load_files(f->d, dir, wfdir), 4);
    assert_true(is_readonly(f->d, SL__JM_BUCKET, "fileBucket"));
    assert_true(is_readonly(f->d, SL__JM_WORKFLOW, "fileWf"));
    assert_true(is_readonly(f->d, SL__JM_WORKFLOW, "singleWf"));
    assert_true(is_readonly(f->d, SL__JM_JOB, "fileJob"));
    assert_null(sl__jm_defs_get(f->d, SL__JM_BUCKET, "badBucket"));
    assert_null(sl__jm_defs_get(f->d, SL__JM_WORKFLOW, "badWf"));
    assert_null(sl__jm_defs_get(f->d, SL__JM_WORKFLOW, "broken"));
    assert_null(sl__jm_defs_get(f->d, SL__JM_JOB, "orphan"));

    /* Missing files and directories are fine. */
    assert_int_equal(sl__jm_defs_load_files(f->d, wfdir, "/nonexistent/x"), 0);

    remove_file(dir, "buckets.json");
    remove_file(dir, "jobs.json");
    remove_file(wfdir, "a-broken.json");
    remove_file(wfdir, "b-multi.json");
    remove_file(wfdir, "c-single.json");
    remove_file(wfdir, "notes.txt");
    assert_int_equal(rmdir(wfdir), 0);
    assert_int_equal(rmdir(dir), 0);
    sl_free(wfdir);
}

/* ------------------------------------------------------------------------
 * Concurrency: readers never see a half-made update.
 * --------------------------------------------------------------------- */

#define RACE_ROUNDS 3000

/* The "store" parameter of bucket definition @p b, or NULL. */
static const char *
str_or_null(const json_t *b)
{
    return json_string_value(
        json_object_get(json_object_get(b, "parameters"), "store"));
}

static void *
reader_main(void *arg)
{
    struct sl__jm_defs *d = arg;
    json_t *job = jq("{'name':'cj','workflow':'cw','parameters':"
                     "{'store':'js','tempStore':'jt'}}");
    size_t i = 0;
    long bad = 0;

    for (i = 0; i < RACE_ROUNDS; i++) {
        json_t *b = sl__jm_defs_get(d, SL__JM_BUCKET, "cb");
        json_t *wf = sl__jm_defs_get(d, SL__JM_WORKFLOW, "cw");
        json_t *list = sl__jm_defs_list(d, SL__JM_WORKFLOW);
        struct sl__jm_bucket_info info;
        struct sl_err err;
        const char *store = str_or_null(b);

        if (b == NULL || wf == NULL || json_array_size(list) < 1 ||
            store == NULL ||
            (strcmp(store, "s1") != 0 && strcmp(store, "s2") != 0)) {
            bad++;
        }
        if (sl__jm_bucket_resolve(d, job, wf, "cb", &info, &err) != 0 ||
            sl__jm_defs_worker(d, "processor") == NULL) {
            bad++;
        }
        json_decref(b);
        json_decref(wf);
        json_decref(list);
    }
    json_decref(job);
    return (void *)bad;
}

static void
test_concurrent_readers(void **state)
{
    struct fixture *f = *state;
    pthread_t tid[2];
    void *bad = NULL;
    size_t i = 0;

    put_ok(f->d,
           SL__JM_BUCKET,
           "{'name':'cb','type':'recordBulks','parameters':{'store':'s1'}}",
           0);
    put_ok(f->d,
           SL__JM_WORKFLOW,
           "{'name':'cw','startAction':{'worker':'processor',"
           "'input':{'input':'cb'}}}",
           0);
    /* Two readers, so concurrent deep copies of one definition are
     * exercised too (run under TSan as well as ASan). */
    for (i = 0; i < 2; i++) {
        assert_int_equal(pthread_create(&tid[i], NULL, reader_main, f->d), 0);
    }
    for (i = 0; i < RACE_ROUNDS; i++) {
        put_ok(f->d,
               SL__JM_BUCKET,
               i % 2 == 0 ? "{'name':'cb','type':'recordBulks',"
                            "'parameters':{'store':'s2'}}"
                          : "{'name':'cb','type':'recordBulks',"
                            "'parameters':{'store':'s1'}}",
               0);
        put_ok(f->d,
               SL__JM_WORKFLOW,
               i % 2 == 0 ? "{'name':'cw','modes':['standard'],"
                            "'startAction':{'worker':'processor',"
                            "'input':{'input':'cb'}}}"
                          : "{'name':'cw','startAction':{'worker':"
                            "'processor','input':{'input':'cb'}}}",
               0);
    }
    for (i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(tid[i], &bad), 0);
        assert_null(bad);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_parse_errors),
        cmocka_unit_test(test_worker_parse_valid),
        cmocka_unit_test_setup_teardown(test_workers_registry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bucket_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workflow_slot_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workflow_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_rules, setup, teardown),
        cmocka_unit_test(test_task_params_order),
        cmocka_unit_test_setup_teardown(test_bucket_resolve, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_readonly_and_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_revalidate_dependents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_files, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_concurrent_readers, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
