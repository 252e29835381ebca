/*
 * reads.c: the read tools of the retail module (the Go module's
 * tools_read.go and transfer_to_human_agents), same answers byte for byte.
 */
#include "retail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lowering (the Go module's pyLower: strings.ToLower) ---------------------- */

/* go_lower lowers s as Go's strings.ToLower does for what the retail data
 * holds: ASCII, Latin-1 letters (U+00C0..U+00DE but U+00D7), the KELVIN
 * SIGN (to 'k') and U+0130 (to 'i'), which lower to ASCII in Go; an invalid
 * UTF-8 byte becomes U+FFFD as strings.Map writes it; every other rune is
 * kept. Two strings compared after lowering are equal exactly when they are
 * equal in Go for every input whose non-ASCII letters are of those ranges. */
static str go_lower(str s) {
    size_t i = 0;
    for (; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c >= 0x80 || (c >= 'A' && c <= 'Z')) break;
    }
    if (i == s.n) return s; /* nothing to lower */
    char *d = ar_alloc(s.n * 3 + 1);
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s.p;
    for (i = 0; i < s.n;) {
        unsigned c = p[i];
        if (c < 0x80) {
            d[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            i++;
            continue;
        }
        /* decode one rune (Go's rules: see json.c); invalid -> U+FFFD */
        int32_t r = -1;
        size_t size = 1;
        if (c >= 0xC2 && c <= 0xDF && i + 1 < s.n && (p[i + 1] & 0xC0) == 0x80) {
            r = (int32_t)(((c & 0x1F) << 6) | (p[i + 1] & 0x3F));
            size = 2;
        } else if (c >= 0xE0 && c <= 0xEF && i + 2 < s.n && (p[i + 1] & 0xC0) == 0x80 && (p[i + 2] & 0xC0) == 0x80 &&
                   !(c == 0xE0 && p[i + 1] < 0xA0) && !(c == 0xED && p[i + 1] > 0x9F)) {
            r = (int32_t)(((c & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F));
            size = 3;
        } else if (c >= 0xF0 && c <= 0xF4 && i + 3 < s.n && (p[i + 1] & 0xC0) == 0x80 && (p[i + 2] & 0xC0) == 0x80 &&
                   (p[i + 3] & 0xC0) == 0x80 && !(c == 0xF0 && p[i + 1] < 0x90) && !(c == 0xF4 && p[i + 1] > 0x8F)) {
            r = (int32_t)(((c & 0x07) << 18) | ((p[i + 1] & 0x3F) << 12) | ((p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3F));
            size = 4;
        }
        if (r < 0) {
            memcpy(d + n, "\xEF\xBF\xBD", 3);
            n += 3;
            i++;
            continue;
        }
        if (r == 0x212A) { d[n++] = 'k'; i += size; continue; }
        if (r == 0x130) { d[n++] = 'i'; i += size; continue; }
        if (r >= 0xC0 && r <= 0xDE && r != 0xD7) {
            r += 32;
            d[n++] = (char)(0xC0 | (r >> 6));
            d[n++] = (char)(0x80 | (r & 0x3F));
            i += size;
            continue;
        }
        memcpy(d + n, p + i, size);
        n += size;
        i += size;
    }
    return (str){d, n};
}

/* ---- tools -------------------------------------------------------------------- */

int t_find_user_id_by_email(const jval *args, buf *out) {
    sqlbatch *b = sql_batch();
    sql_add(b, "SELECT user_id, email FROM users ORDER BY pos", 0, NULL);
    sqlres *r;
    int rc = sql_run(b, "query", out, &r);
    if (rc) return rc;
    str want = go_lower(arg_str(args, "email"));
    for (size_t i = 0; i < r->nrows; i++) {
        const sqlv *id = CELL(r, i, 0), *email = CELL(r, i, 1);
        if (id->t != V_STR || email->t != V_STR) return tool_error(out, "retail: users: column 0: want a string");
        if (str_eq(go_lower(email->s), want)) {
            out->len = 0;
            buf_put_s(out, id->s);
            return R_TEXT;
        }
    }
    return tool_error(out, "User not found");
}

int t_find_user_id_by_name_zip(const jval *args, buf *out) {
    str zip = arg_str(args, "zip");
    sqlbatch *b = sql_batch();
    sqlv *a = AR_NEW(sqlv, 1);
    a[0] = SV_STR(zip);
    sql_add(b, "SELECT user_id, first_name, last_name, zip FROM users WHERE zip = ? ORDER BY pos", 1, a);
    sqlres *r;
    int rc = sql_run(b, "query", out, &r);
    if (rc) return rc;
    str first = go_lower(arg_str(args, "first_name")), last = go_lower(arg_str(args, "last_name"));
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t c = 0; c < 4; c++)
            if (CELL(r, i, c)->t != V_STR) return tool_error(out, "retail: users: column 0: want a string");
        if (str_eq(go_lower(CELL(r, i, 1)->s), first) && str_eq(go_lower(CELL(r, i, 2)->s), last) &&
            str_eq(CELL(r, i, 3)->s, zip)) {
            out->len = 0;
            buf_put_s(out, CELL(r, i, 0)->s);
            return R_TEXT;
        }
    }
    return tool_error(out, "User not found");
}

int t_get_order_details(const jval *args, buf *out) {
    order *o;
    int rc = load_order(out, arg_str(args, "order_id"), &o);
    if (rc) return rc;
    if (!o) return tool_error(out, "Order not found");
    out->len = 0;
    w_order(out, o, false);
    return R_JSON;
}

int t_get_user_details(const jval *args, buf *out) {
    user *u;
    int rc = load_user(out, arg_str(args, "user_id"), &u);
    if (rc) return rc;
    if (!u) return tool_error(out, "User not found");
    out->len = 0;
    w_user(out, u);
    return R_JSON;
}

int t_get_product_details(const jval *args, buf *out) {
    product *p;
    int rc = load_product(out, arg_str(args, "product_id"), &p);
    if (rc) return rc;
    if (!p) return tool_error(out, "Product not found");
    out->len = 0;
    w_product(out, p);
    return R_JSON;
}

/* get_item_details: the variant with the item id, whichever product it
 * belongs to. The Go module runs the options query after the variants one;
 * here both go in one batch, the options of every product under that item id,
 * keeping those of the variant found (the same rows in the same order). */
int t_get_item_details(const jval *args, buf *out) {
    str id = arg_str(args, "item_id");
    sqlbatch *b = sql_batch();
    sqlv *a = AR_NEW(sqlv, 1);
    a[0] = SV_STR(id);
    sql_add(b, "SELECT product_id, item_id, available, price FROM variants WHERE item_id = ? ORDER BY product_id", 1, a);
    sql_add(b, "SELECT product_id, item_id, name, value FROM variant_options WHERE item_id = ? ORDER BY product_id, pos", 1, a);
    sqlres *r;
    int rc = sql_run(b, "query", out, &r);
    if (rc) return rc;
    for (size_t i = 0; i < r[0].nrows; i++) {
        const sqlv *pid = CELL(&r[0], i, 0), *iid = CELL(&r[0], i, 1), *av = CELL(&r[0], i, 2), *pr = CELL(&r[0], i, 3);
        if (pid->t != V_STR || iid->t != V_STR) return tool_error(out, "retail: variants: column 0: want a string");
        if (!str_eq(iid->s, id)) continue; /* the collation matched more loosely than == */
        variant v = {0};
        v.item_id = iid->s;
        v.available = av->t == V_FLOAT ? av->f != 0 : av->i != 0;
        v.price = pr->t == V_FLOAT ? pr->f : pr->t == V_INT ? (double)pr->i : 0;
        v.options.v = AR_NEW(option, r[1].nrows + 1);
        for (size_t k = 0; k < r[1].nrows; k++) {
            const sqlv *opid = CELL(&r[1], k, 0), *oiid = CELL(&r[1], k, 1);
            if (opid->t == V_STR && oiid->t == V_STR && str_eq(opid->s, pid->s) && str_eq(oiid->s, iid->s))
                v.options.v[v.options.n++] = (option){CELL(&r[1], k, 2)->s, CELL(&r[1], k, 3)->s};
        }
        out->len = 0;
        w_variant(out, &v);
        return R_JSON;
    }
    return tool_error(out, "Item not found");
}

/* py_json_string quotes s as the Go module's pyJSONString (Python's
 * json.dumps with ensure_ascii). */
static void py_json_string(buf *b, str s) {
    static const char hx[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s.p;
    buf_putc(b, '"');
    for (size_t i = 0; i < s.n;) {
        unsigned c = p[i];
        int32_t r;
        size_t size = 1;
        if (c < 0x80) r = (int32_t)c;
        else {
            r = -1;
            if (c >= 0xC2 && c <= 0xDF && i + 1 < s.n && (p[i + 1] & 0xC0) == 0x80) {
                r = (int32_t)(((c & 0x1F) << 6) | (p[i + 1] & 0x3F));
                size = 2;
            } else if (c >= 0xE0 && c <= 0xEF && i + 2 < s.n && (p[i + 1] & 0xC0) == 0x80 && (p[i + 2] & 0xC0) == 0x80 &&
                       !(c == 0xE0 && p[i + 1] < 0xA0) && !(c == 0xED && p[i + 1] > 0x9F)) {
                r = (int32_t)(((c & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F));
                size = 3;
            } else if (c >= 0xF0 && c <= 0xF4 && i + 3 < s.n && (p[i + 1] & 0xC0) == 0x80 && (p[i + 2] & 0xC0) == 0x80 &&
                       (p[i + 3] & 0xC0) == 0x80 && !(c == 0xF0 && p[i + 1] < 0x90) && !(c == 0xF4 && p[i + 1] > 0x8F)) {
                r = (int32_t)(((c & 0x07) << 18) | ((p[i + 1] & 0x3F) << 12) | ((p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3F));
                size = 4;
            }
            if (r < 0) r = 0xFFFD;
        }
        i += size;
        switch (r) {
        case '"': buf_puts(b, "\\\""); continue;
        case '\\': buf_puts(b, "\\\\"); continue;
        case '\n': buf_puts(b, "\\n"); continue;
        case '\r': buf_puts(b, "\\r"); continue;
        case '\t': buf_puts(b, "\\t"); continue;
        case '\b': buf_puts(b, "\\b"); continue;
        case '\f': buf_puts(b, "\\f"); continue;
        }
        if (r < 0x20 || (r >= 0x7f && r < 0x10000)) {
            char e[6] = {'\\', 'u', hx[(r >> 12) & 15], hx[(r >> 8) & 15], hx[(r >> 4) & 15], hx[r & 15]};
            buf_putn(b, e, 6);
        } else if (r >= 0x10000) {
            int32_t v = r - 0x10000, hi = 0xD800 + (v >> 10), lo = 0xDC00 + (v & 0x3FF);
            char e[12] = {'\\', 'u', hx[(hi >> 12) & 15], hx[(hi >> 8) & 15], hx[(hi >> 4) & 15], hx[hi & 15],
                          '\\', 'u', hx[(lo >> 12) & 15], hx[(lo >> 8) & 15], hx[(lo >> 4) & 15], hx[lo & 15]};
            buf_putn(b, e, 12);
        } else buf_putc(b, (char)r);
    }
    buf_putc(b, '"');
}

static int cmp_str(const void *a, const void *b) {
    const str *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    if (c) return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* list_all_product_types: {product name: product id} sorted by name (bytes),
 * a later product of the same name winning, as Python's json.dumps prints it. */
int t_list_all_product_types(const jval *args, buf *out) {
    (void)args;
    sqlbatch *b = sql_batch();
    sql_add(b, "SELECT name, product_id FROM products ORDER BY pos", 0, NULL);
    sqlres *r;
    int rc = sql_run(b, "query", out, &r);
    if (rc) return rc;
    size_t n = r->nrows;
    /* pairs (name, id, row): sort by name then row; keep each name's last row */
    typedef struct { str name, id; size_t row; } pair;
    pair *ps = AR_NEW(pair, n + 1);
    for (size_t i = 0; i < n; i++) {
        if (CELL(r, i, 0)->t != V_STR || CELL(r, i, 1)->t != V_STR) return tool_error(out, "retail: products: column 0: want a string");
        ps[i] = (pair){CELL(r, i, 0)->s, CELL(r, i, 1)->s, i};
    }
    /* insertion sort: 50 rows (stable, so equal names keep row order) */
    for (size_t i = 1; i < n; i++) {
        pair x = ps[i];
        size_t j = i;
        while (j > 0 && cmp_str(&ps[j - 1].name, &x.name) > 0) {
            ps[j] = ps[j - 1];
            j--;
        }
        ps[j] = x;
    }
    out->len = 0;
    buf_putc(out, '{');
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && str_eq(ps[i + 1].name, ps[i].name)) continue; /* the last of equal names wins */
        if (!first) buf_puts(out, ", ");
        first = false;
        py_json_string(out, ps[i].name);
        buf_puts(out, ": ");
        py_json_string(out, ps[i].id);
    }
    buf_putc(out, '}');
    return R_TEXT;
}

int t_transfer_to_human_agents(const jval *args, buf *out) {
    (void)args;
    out->len = 0;
    buf_puts(out, "Transfer successful");
    return R_TEXT;
}
