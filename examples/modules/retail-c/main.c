/*
 * main.c: the module's exports (docs/abi.md "Exports"), the dispatch of a
 * call request to its tool and the CallToolResult around the tool's answer,
 * byte for byte what sdk/tool's Dispatch writes for the Go module.
 */
#include "retail.h"

#include <stdlib.h>
#include <string.h>

#define WEFT_EXPORT(name) __attribute__((export_name(name), used))

void ar_reset(void);
void sql_reset(void);
int sql_flush(buf *out);
void json_escape(buf *b, str s, bool html);

static const char manifest[] =
#include "manifest.inc"
    ;

/* ---- the tools: name, function, Go argument struct (for error messages), params ---- */

typedef struct {
    const char *name;
    char type; /* 's' string, 'l' list of strings */
} param;

typedef struct {
    const char *name;
    tool_fn fn;
    const char *gotype; /* the Go module's input struct */
    param params[8];
} tooldef;

static const tooldef tools[] = {
    {"calculate", t_calculate, "calculateIn", {{"expression", 's'}}},
    {"cancel_pending_order", t_cancel_pending_order, "cancelIn", {{"order_id", 's'}, {"reason", 's'}}},
    {"exchange_delivered_order_items", t_exchange_delivered_order_items, "exchangeIn",
     {{"order_id", 's'}, {"item_ids", 'l'}, {"new_item_ids", 'l'}, {"payment_method_id", 's'}}},
    {"find_user_id_by_name_zip", t_find_user_id_by_name_zip, "findByNameZipIn", {{"first_name", 's'}, {"last_name", 's'}, {"zip", 's'}}},
    {"find_user_id_by_email", t_find_user_id_by_email, "findByEmailIn", {{"email", 's'}}},
    {"get_order_details", t_get_order_details, "orderIDIn", {{"order_id", 's'}}},
    {"get_product_details", t_get_product_details, "productIDIn", {{"product_id", 's'}}},
    {"get_item_details", t_get_item_details, "itemIDIn", {{"item_id", 's'}}},
    {"get_user_details", t_get_user_details, "userIDIn", {{"user_id", 's'}}},
    {"list_all_product_types", t_list_all_product_types, "noIn", {{0}}},
    {"modify_pending_order_address", t_modify_pending_order_address, "orderAddressIn",
     {{"order_id", 's'}, {"address1", 's'}, {"address2", 's'}, {"city", 's'}, {"state", 's'}, {"country", 's'}, {"zip", 's'}}},
    {"modify_pending_order_items", t_modify_pending_order_items, "modifyItemsIn",
     {{"order_id", 's'}, {"item_ids", 'l'}, {"new_item_ids", 'l'}, {"payment_method_id", 's'}}},
    {"modify_pending_order_payment", t_modify_pending_order_payment, "modifyPaymentIn", {{"order_id", 's'}, {"payment_method_id", 's'}}},
    {"modify_user_address", t_modify_user_address, "userAddressIn",
     {{"user_id", 's'}, {"address1", 's'}, {"address2", 's'}, {"city", 's'}, {"state", 's'}, {"country", 's'}, {"zip", 's'}}},
    {"return_delivered_order_items", t_return_delivered_order_items, "returnIn", {{"order_id", 's'}, {"item_ids", 'l'}, {"payment_method_id", 's'}}},
    {"transfer_to_human_agents", t_transfer_to_human_agents, "transferIn", {{"summary", 's'}}},
    {"weft.export", t_export, "", {{0}}},
};

int tool_error(buf *out, const char *msg) {
    out->len = 0;
    buf_puts(out, msg);
    return R_TOOL_ERROR;
}

int internal_error(buf *out, const char *msg) {
    out->len = 0;
    buf_puts(out, msg);
    return R_INTERNAL;
}

static const char *jkind(const jval *v) {
    switch (v->t) {
    case J_STR: return "string";
    case J_NUM: return "number";
    case J_ARR: return "array";
    case J_OBJ: return "object";
    default: return "bool";
    }
}

/* check_args: what encoding/json's strict decoding into the Go module's
 * input struct refuses (an unknown member, a value of the wrong type), as a
 * tool error "invalid arguments: json: ..."; 0 when the arguments decode.
 * The host validates against the input schema first, so through weft these
 * never reach the module; they matter for a direct caller. */
static int check_args(const tooldef *t, const jval *args, buf *out) {
    if (args->t == J_NULL) return 0;
    out->len = 0;
    if (args->t != J_OBJ) {
        buf_puts(out, "invalid arguments: json: cannot unmarshal ");
        buf_puts(out, jkind(args));
        buf_puts(out, " into Go value of type main.");
        buf_puts(out, t->gotype);
        return R_TOOL_ERROR;
    }
    for (size_t i = 0; i < args->n; i++) {
        const param *p = NULL;
        for (const param *q = t->params; q->name; q++)
            if (str_eqz(args->keys[i], q->name)) p = q;
        if (!p) {
            buf_puts(out, "invalid arguments: json: unknown field ");
            json_escape(out, args->keys[i], false);
            return R_TOOL_ERROR;
        }
        const jval *v = &args->items[i];
        if (v->t == J_NULL) continue;
        const jval *bad = NULL;
        if (p->type == 's' && v->t != J_STR) bad = v;
        if (p->type == 'l') {
            if (v->t != J_ARR) bad = v;
            else
                for (size_t k = 0; k < v->n && !bad; k++)
                    if (v->items[k].t != J_STR && v->items[k].t != J_NULL) bad = &v->items[k];
        }
        if (bad) {
            buf_puts(out, "invalid arguments: json: cannot unmarshal ");
            buf_puts(out, jkind(bad));
            buf_puts(out, " into Go struct field ");
            buf_puts(out, t->gotype);
            buf_putc(out, '.');
            buf_puts(out, p->name);
            buf_puts(out, " of type ");
            buf_puts(out, p->type == 's' || bad != v ? "string" : "[]string");
            return R_TOOL_ERROR;
        }
    }
    return 0;
}

/* ---- exports ------------------------------------------------------------------ */

static char *reqbuf;
static size_t reqcap;
static buf resp, result, errmsg;

WEFT_EXPORT("weft_abi_v1") void weft_abi_v1(void) {}

WEFT_EXPORT("weft_v1_alloc") char *weft_v1_alloc(int32_t size) {
    if (size < 0) __builtin_trap();
    if ((size_t)size > reqcap) {
        free(reqbuf);
        reqcap = (size_t)size < 4096 ? 4096 : (size_t)size;
        reqbuf = malloc(reqcap);
        if (!reqbuf) __builtin_trap();
    }
    return reqbuf;
}

static int64_t pack(const char *p, size_t n) { return (int64_t)(((uint64_t)(uintptr_t)p << 32) | (uint32_t)n); }

WEFT_EXPORT("weft_v1_manifest") int64_t weft_v1_manifest(void) { return pack(manifest, sizeof manifest - 1); }

static void wrap(int rc, str body) {
    resp.len = 0;
    if (rc == R_INTERNAL) {
        buf_puts(&resp, "{\"internalError\":");
        json_escape(&resp, body, false);
        buf_putc(&resp, '}');
        return;
    }
    buf_puts(&resp, "{\"content\":[{\"type\":\"text\",\"text\":");
    json_escape(&resp, body, false);
    buf_puts(&resp, "}]");
    if (rc == R_JSON && body.n > 0 && body.p[0] == '{') {
        buf_puts(&resp, ",\"structuredContent\":");
        buf_put_s(&resp, body);
    }
    if (rc == R_TOOL_ERROR) buf_puts(&resp, ",\"isError\":true");
    buf_putc(&resp, '}');
}

WEFT_EXPORT("weft_v1_call") int64_t weft_v1_call(const char *req, int32_t len) {
    ar_reset();
    sql_reset();
    result.len = 0;
    const char *err = NULL;
    const jval *r = json_parse((str){req, (size_t)(len < 0 ? 0 : len)}, &err);
    const jval *name = r ? json_get(r, "tool") : NULL;
    if (!r || r->t != J_OBJ || !name || name->t != J_STR) {
        buf_puts(&result, "malformed call request: ");
        buf_puts(&result, r ? "no tool name" : err);
        wrap(R_INTERNAL, buf_str(&result));
        return pack(resp.p, resp.len);
    }
    const jval *args = json_get(r, "arguments");
    static const jval empty = {J_NULL, {0}, 0, NULL, NULL};
    if (!args) args = &empty;
    const tooldef *t = NULL;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (str_eqz(name->s, tools[i].name)) t = &tools[i];
    int rc;
    if (!t) {
        buf_puts(&result, "unknown tool ");
        json_escape(&result, name->s, false);
        rc = R_TOOL_ERROR;
    } else {
        cur_tool = t->name;
        rc = check_args(t, args, &result);
        if (!rc) rc = t->fn(args, &result);
        if (rc == R_JSON || rc == R_TEXT) {
            errmsg.len = 0;
            int frc = sql_flush(&errmsg);
            if (frc) {
                rc = frc;
                result.len = 0;
                buf_put_s(&result, buf_str(&errmsg));
            }
        }
    }
    wrap(rc, buf_str(&result));
    return pack(resp.p, resp.len);
}
