/*
 * records.c: the retail records read from SQL and written as JSON, the C
 * twin of examples/modules/retail/records (same statements, same assembly
 * rules, same bytes out).
 */
#include "retail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cells ------------------------------------------------------------------ */

/* cells reads one result row left to right, keeping the first error (the
 * Go records.Cells). */
typedef struct {
    const sqlv *r;
    size_t n, i;
    char err[96];
} cells;

static const char *gotype(const sqlv *v) {
    switch (v->t) {
    case V_INT: return "int64";
    case V_UINT: return "uint64";
    case V_FLOAT: return "float64";
    case V_BOOL: return "bool";
    case V_TIME: return "time.Time";
    case V_BYTES: return "[]uint8";
    default: return "string";
    }
}

static void cfail(cells *c, const char *what, const sqlv *v) {
    if (c->err[0]) return;
    if (!v) snprintf(c->err, sizeof c->err, "row has only %u columns", (unsigned)c->n);
    else if (v->t == V_NULL) snprintf(c->err, sizeof c->err, "column %u: unexpected NULL", (unsigned)(c->i - 1));
    else snprintf(c->err, sizeof c->err, "column %u: want %s, got %s", (unsigned)(c->i - 1), what, gotype(v));
}

static const sqlv *cnext(cells *c) {
    if (c->i >= c->n) {
        cfail(c, "", NULL);
        return NULL;
    }
    return &c->r[c->i++];
}

static str c_str(cells *c) {
    const sqlv *v = cnext(c);
    if (v && (v->t == V_STR || v->t == V_BYTES || v->t == V_DECIMAL || v->t == V_JSON)) return v->s;
    if (v) cfail(c, "a string", v);
    return (str){"", 0};
}

static optstr c_nullstr(cells *c) {
    if (c->i < c->n && c->r[c->i].t == V_NULL) {
        c->i++;
        return (optstr){false, {"", 0}};
    }
    return (optstr){true, c_str(c)};
}

static double parse_f(cells *c, str s, const sqlv *v) {
    char tmp[64];
    if (s.n == 0 || s.n >= sizeof tmp) { cfail(c, "a number", v); return 0; }
    memcpy(tmp, s.p, s.n);
    tmp[s.n] = 0;
    char *end;
    double f = strtod(tmp, &end);
    if (*end) cfail(c, "a number", v);
    return f;
}

static double c_float(cells *c) {
    const sqlv *v = cnext(c);
    if (!v) return 0;
    switch (v->t) {
    case V_FLOAT: return v->f;
    case V_INT: return (double)v->i;
    case V_UINT: return (double)v->u;
    case V_STR: case V_BYTES: case V_DECIMAL: case V_JSON: return parse_f(c, v->s, v);
    default: cfail(c, "a number", v); return 0;
    }
}

static optnum c_nullfloat(cells *c) {
    if (c->i < c->n && c->r[c->i].t == V_NULL) {
        c->i++;
        return (optnum){false, 0};
    }
    double f = c_float(c);
    return (optnum){true, f};
}

static int64_t c_int(cells *c) {
    const sqlv *v = cnext(c);
    if (!v) return 0;
    switch (v->t) {
    case V_INT: case V_BOOL: return v->i;
    case V_UINT: return (int64_t)v->u;
    case V_FLOAT: return (int64_t)v->f;
    case V_STR: case V_BYTES: case V_DECIMAL: {
        char tmp[32];
        if (v->s.n == 0 || v->s.n >= sizeof tmp) { cfail(c, "an integer", v); return 0; }
        memcpy(tmp, v->s.p, v->s.n);
        tmp[v->s.n] = 0;
        char *end;
        long long x = strtoll(tmp, &end, 10);
        if (*end) cfail(c, "an integer", v);
        return x;
    }
    default: cfail(c, "an integer", v); return 0;
    }
}

static bool c_bool(cells *c) { return c_int(c) != 0; }

/* c_strlist reads a nullable JSON array of strings (records.Cells.StrList). */
static strlist c_strlist(cells *c) {
    const sqlv *v = cnext(c);
    strlist l = {false, NULL, 0};
    if (!v || v->t == V_NULL) return l;
    if (v->t != V_STR && v->t != V_BYTES && v->t != V_JSON) {
        cfail(c, "a JSON array", v);
        return l;
    }
    const char *err = NULL;
    const jval *j = json_parse(v->s, &err);
    if (!j || (j->t != J_ARR && j->t != J_NULL)) {
        if (!c->err[0]) snprintf(c->err, sizeof c->err, "column %u: not a JSON array of strings", (unsigned)(c->i - 1));
        return l;
    }
    l.set = true;
    if (j->t == J_NULL) return l;
    l.v = AR_NEW(str, j->n + 1);
    l.n = j->n;
    for (size_t i = 0; i < j->n; i++) {
        if (j->items[i].t == J_STR) l.v[i] = j->items[i].s;
        else if (j->items[i].t != J_NULL && !c->err[0])
            snprintf(c->err, sizeof c->err, "column %u: not a JSON array of strings", (unsigned)(c->i - 1));
    }
    return l;
}

/* c_check: 0, or the tool error "retail: <table>: <reason>". */
static int c_check(cells *c, const char *table, buf *out) {
    if (!c->err[0]) return 0;
    out->len = 0;
    buf_puts(out, "retail: ");
    buf_puts(out, table);
    buf_puts(out, ": ");
    buf_puts(out, c->err);
    return R_TOOL_ERROR;
}

static cells row_cells(const sqlres *r, size_t row) {
    cells c;
    c.r = CELL(r, row, 0);
    c.n = r->ncols;
    c.i = 0;
    c.err[0] = 0;
    return c;
}

/* ---- an id index (export: every record) -------------------------------------- */

typedef struct {
    str *keys;
    void **vals;
    size_t mask;
} idmap;

static uint32_t hash(str s) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < s.n; i++) h = (h ^ (unsigned char)s.p[i]) * 16777619u;
    return h;
}

static void idmap_init(idmap *m, size_t n) {
    size_t cap = 8;
    while (cap < n * 2) cap *= 2;
    m->keys = AR_NEW(str, cap);
    m->vals = AR_NEW(void *, cap);
    m->mask = cap - 1;
}

static void idmap_put(idmap *m, str k, void *v) {
    for (size_t i = hash(k) & m->mask;; i = (i + 1) & m->mask) {
        if (!m->vals[i] || str_eq(m->keys[i], k)) {
            m->keys[i] = k;
            m->vals[i] = v;
            return;
        }
    }
}

static void *idmap_get(const idmap *m, str k) {
    for (size_t i = hash(k) & m->mask; m->vals[i]; i = (i + 1) & m->mask) {
        if (str_eq(m->keys[i], k)) return m->vals[i];
    }
    return NULL;
}

/* owner index per row of a sub-table: owners are records, in a list of n
 * whose ids are at ids[i]; single-record reads compare directly. */
typedef struct {
    size_t n;
    const str *const *ids; /* pointer to each record's id */
    idmap map;             /* when n > 4 */
} owners;

static long owner_of(const owners *o, str id) {
    if (o->n <= 4) {
        for (size_t i = 0; i < o->n; i++)
            if (str_eq(*o->ids[i], id)) return (long)i;
        return -1;
    }
    void *v = idmap_get(&o->map, id);
    return v ? (long)((uintptr_t)v - 1) : -1;
}

static void owners_init(owners *o, size_t n, const str **ids) {
    o->n = n;
    o->ids = ids;
    if (n > 4) {
        idmap_init(&o->map, n);
        for (size_t i = 0; i < n; i++) idmap_put(&o->map, *ids[i], (void *)(uintptr_t)(i + 1));
    }
}

/* ---- statements -------------------------------------------------------------- */

/* read is one statement of a reader: its SELECT, the filter column, the ORDER
 * BY (records.read); the full statements are precomputed for both forms. */
typedef struct {
    const char *one; /* ... WHERE col = ? ORDER BY ... */
    const char *all; /* ... ORDER BY ... */
} readstmt;

#define RS(sel, col, ord) {sel " WHERE " col " = ? ORDER BY " ord, sel " ORDER BY " ord}

static const readstmt user_reads[3] = {
    RS("SELECT user_id, first_name, last_name, address1, address2, city, country, state, zip, email FROM users", "user_id", "pos"),
    RS("SELECT user_id, payment_method_id, source, brand, last_four, balance FROM payment_methods", "user_id", "user_id, pos"),
    RS("SELECT user_id, order_id FROM user_orders", "user_id", "user_id, pos"),
};

static const readstmt order_reads[7] = {
    RS("SELECT order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason, exchange_items, exchange_new_items, "
       "exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id FROM orders", "order_id", "pos"),
    RS("SELECT order_id, pos, item_id, product_id, name, price FROM order_items", "order_id", "order_id, pos"),
    RS("SELECT order_id, item_pos, name, value FROM order_item_options", "order_id", "order_id, item_pos, pos"),
    RS("SELECT order_id, pos FROM fulfillments", "order_id", "order_id, pos"),
    RS("SELECT order_id, fulfillment_pos, tracking_id FROM fulfillment_tracking_ids", "order_id", "order_id, fulfillment_pos, pos"),
    RS("SELECT order_id, fulfillment_pos, item_id FROM fulfillment_item_ids", "order_id", "order_id, fulfillment_pos, pos"),
    RS("SELECT order_id, transaction_type, amount, payment_method_id FROM payments", "order_id", "order_id, pos"),
};

static const readstmt product_reads[3] = {
    RS("SELECT product_id, name FROM products", "product_id", "pos"),
    RS("SELECT product_id, item_id, available, price FROM variants", "product_id", "product_id, pos"),
    RS("SELECT product_id, item_id, name, value FROM variant_options", "product_id", "product_id, item_id, pos"),
};

static void add_reads(sqlbatch *b, const readstmt *rs, size_t n, const str *id) {
    for (size_t i = 0; i < n; i++) {
        if (id) {
            sqlv *a = AR_NEW(sqlv, 1);
            *a = SV_STR(*id);
            sql_add(b, rs[i].one, 1, a);
        } else sql_add(b, rs[i].all, 0, NULL);
    }
}

/* ---- assembly ---------------------------------------------------------------- */

/* counts per owner, then exact arrays, then fill: owner[] is the owner index
 * of each row (-1: none). */
static long *row_owners(const sqlres *r, const owners *o, size_t *counts, size_t nown) {
    long *w = AR_NEW(long, r->nrows + 1);
    memset(counts, 0, nown * sizeof *counts);
    for (size_t i = 0; i < r->nrows; i++) {
        const sqlv *v = CELL(r, i, 0);
        w[i] = (v->t == V_STR || v->t == V_BYTES) ? owner_of(o, v->s) : -1;
        if (w[i] >= 0) counts[w[i]]++;
    }
    return w;
}

/* assemble_users builds users from res[0..2] (filter id, or all when NULL);
 * *out_users / *nusers. */
static int assemble_users(const str *id, const sqlres *res, buf *out, user ***out_users, size_t *nusers) {
    const sqlres *r = &res[0];
    user **us = AR_NEW(user *, r->nrows + 1);
    size_t n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        user *u = AR_NEW(user, 1);
        u->user_id = c_str(&c);
        u->first_name = c_str(&c);
        u->last_name = c_str(&c);
        u->address.address1 = c_str(&c);
        u->address.address2 = c_str(&c);
        u->address.city = c_str(&c);
        u->address.country = c_str(&c);
        u->address.state = c_str(&c);
        u->address.zip = c_str(&c);
        u->email = c_str(&c);
        int rc = c_check(&c, "users", out);
        if (rc) return rc;
        if (id && !str_eq(u->user_id, *id)) continue; /* the collation matched more loosely than == */
        us[n++] = u;
    }
    *out_users = us;
    *nusers = n;
    if (!n) return 0;
    const str **ids = AR_NEW(const str *, n);
    for (size_t i = 0; i < n; i++) ids[i] = &us[i]->user_id;
    owners o;
    owners_init(&o, n, ids);
    size_t *cnt = AR_NEW(size_t, n);

    r = &res[1];
    long *w = row_owners(r, &o, cnt, n);
    for (size_t k = 0; k < n; k++) us[k]->methods = AR_NEW(payment_method, cnt[k] + 1);
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        c_str(&c);
        payment_method m = {0};
        m.id = c_str(&c);
        m.source = c_str(&c);
        optstr b = c_nullstr(&c), l = c_nullstr(&c);
        optnum bal = c_nullfloat(&c);
        int rc = c_check(&c, "payment_methods", out);
        if (rc) return rc;
        m.has_brand = b.set; m.brand = b.v;
        m.has_last_four = l.set; m.last_four = l.v;
        m.has_balance = bal.set; m.balance = bal.v;
        if (w[i] >= 0) {
            user *u = us[w[i]];
            u->methods[u->nmethods++] = m;
        }
    }
    r = &res[2];
    w = row_owners(r, &o, cnt, n);
    for (size_t k = 0; k < n; k++) us[k]->orders = AR_NEW(str, cnt[k] + 1);
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        c_str(&c);
        str oid = c_str(&c);
        int rc = c_check(&c, "user_orders", out);
        if (rc) return rc;
        if (w[i] >= 0) {
            user *u = us[w[i]];
            u->orders[u->norders++] = oid;
        }
    }
    return 0;
}

typedef struct {
    int64_t *item_pos;  /* pos of each item */
    int64_t *ful_pos;   /* pos of each fulfillment */
} order_side;

static long find_pos(const int64_t *pos, size_t n, int64_t p) {
    for (size_t i = 0; i < n; i++)
        if (pos[i] == p) return (long)i;
    return -1;
}

static int assemble_orders(const str *id, const sqlres *res, buf *out, order ***out_orders, size_t *norders) {
    const sqlres *r = &res[0];
    order **os = AR_NEW(order *, r->nrows + 1);
    size_t n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        order *o = AR_NEW(order, 1);
        o->order_id = c_str(&c);
        o->user_id = c_str(&c);
        o->address.address1 = c_str(&c);
        o->address.address2 = c_str(&c);
        o->address.city = c_str(&c);
        o->address.country = c_str(&c);
        o->address.state = c_str(&c);
        o->address.zip = c_str(&c);
        o->status = c_str(&c);
        o->cancel_reason = c_nullstr(&c);
        o->exchange_items = c_strlist(&c);
        o->exchange_new_items = c_strlist(&c);
        o->exchange_payment_method_id = c_nullstr(&c);
        o->exchange_price_difference = c_nullfloat(&c);
        o->return_items = c_strlist(&c);
        o->return_payment_method_id = c_nullstr(&c);
        int rc = c_check(&c, "orders", out);
        if (rc) return rc;
        if (id && !str_eq(o->order_id, *id)) continue;
        os[n++] = o;
    }
    *out_orders = os;
    *norders = n;
    if (!n) return 0;
    const str **ids = AR_NEW(const str *, n);
    for (size_t i = 0; i < n; i++) ids[i] = &os[i]->order_id;
    owners ow;
    owners_init(&ow, n, ids);
    size_t *cnt = AR_NEW(size_t, n);
    order_side *side = AR_NEW(order_side, n);

    /* items */
    r = &res[1];
    long *w = row_owners(r, &ow, cnt, n);
    for (size_t k = 0; k < n; k++) {
        os[k]->items = AR_NEW(order_item, cnt[k] + 1);
        side[k].item_pos = AR_NEW(int64_t, cnt[k] + 1);
    }
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        c_str(&c);
        int64_t pos = c_int(&c);
        order_item it = {0};
        it.item_id = c_str(&c);
        it.product_id = c_str(&c);
        it.name = c_str(&c);
        it.price = c_float(&c);
        int rc = c_check(&c, "order_items", out);
        if (rc) return rc;
        if (w[i] >= 0) {
            order *o = os[w[i]];
            side[w[i]].item_pos[o->nitems] = pos;
            o->items[o->nitems++] = it;
        }
    }
    /* item options: count per item first */
    r = &res[2];
    {
        long *wi = AR_NEW(long, r->nrows + 1);
        long *wo = AR_NEW(long, r->nrows + 1);
        size_t **icnt = AR_NEW(size_t *, n);
        for (size_t k = 0; k < n; k++) icnt[k] = AR_NEW(size_t, os[k]->nitems + 1);
        for (size_t i = 0; i < r->nrows; i++) {
            cells c = row_cells(r, i);
            str oid = c_str(&c);
            int64_t ipos = c_int(&c);
            c_str(&c);
            c_str(&c);
            int rc = c_check(&c, "order_item_options", out);
            if (rc) return rc;
            wo[i] = owner_of(&ow, oid);
            wi[i] = wo[i] >= 0 ? find_pos(side[wo[i]].item_pos, os[wo[i]]->nitems, ipos) : -1;
            if (wi[i] >= 0) icnt[wo[i]][wi[i]]++;
        }
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < os[k]->nitems; j++) os[k]->items[j].options.v = AR_NEW(option, icnt[k][j] + 1);
        for (size_t i = 0; i < r->nrows; i++) {
            if (wi[i] < 0) continue;
            options *op = &os[wo[i]]->items[wi[i]].options;
            op->v[op->n++] = (option){CELL(r, i, 2)->s, CELL(r, i, 3)->s};
        }
    }
    /* fulfillments */
    r = &res[3];
    w = row_owners(r, &ow, cnt, n);
    for (size_t k = 0; k < n; k++) {
        os[k]->fulfillments = AR_NEW(fulfillment, cnt[k] + 1);
        side[k].ful_pos = AR_NEW(int64_t, cnt[k] + 1);
    }
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        c_str(&c);
        int64_t pos = c_int(&c);
        int rc = c_check(&c, "fulfillments", out);
        if (rc) return rc;
        if (w[i] >= 0) {
            order *o = os[w[i]];
            side[w[i]].ful_pos[o->nfulfillments++] = pos;
        }
    }
    /* tracking ids (4) and item ids (5) of each fulfillment */
    for (int t = 4; t <= 5; t++) {
        r = &res[t];
        long *wo = AR_NEW(long, r->nrows + 1);
        long *wf = AR_NEW(long, r->nrows + 1);
        size_t **fcnt = AR_NEW(size_t *, n);
        for (size_t k = 0; k < n; k++) fcnt[k] = AR_NEW(size_t, os[k]->nfulfillments + 1);
        for (size_t i = 0; i < r->nrows; i++) {
            cells c = row_cells(r, i);
            str oid = c_str(&c);
            int64_t fpos = c_int(&c);
            c_str(&c);
            int rc = c_check(&c, "fulfillments", out);
            if (rc) return rc;
            wo[i] = owner_of(&ow, oid);
            wf[i] = wo[i] >= 0 ? find_pos(side[wo[i]].ful_pos, os[wo[i]]->nfulfillments, fpos) : -1;
            if (wf[i] >= 0) fcnt[wo[i]][wf[i]]++;
        }
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < os[k]->nfulfillments; j++) {
                fulfillment *f = &os[k]->fulfillments[j];
                if (t == 4) f->tracking_ids = AR_NEW(str, fcnt[k][j] + 1);
                else f->item_ids = AR_NEW(str, fcnt[k][j] + 1);
            }
        for (size_t i = 0; i < r->nrows; i++) {
            if (wf[i] < 0) continue;
            fulfillment *f = &os[wo[i]]->fulfillments[wf[i]];
            str v = CELL(r, i, 2)->s;
            if (t == 4) f->tracking_ids[f->ntracking++] = v;
            else f->item_ids[f->nitem_ids++] = v;
        }
    }
    /* payments */
    r = &res[6];
    w = row_owners(r, &ow, cnt, n);
    for (size_t k = 0; k < n; k++) os[k]->payments = AR_NEW(payment, cnt[k] + 1);
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        c_str(&c);
        payment p;
        p.transaction_type = c_str(&c);
        p.amount = c_float(&c);
        p.payment_method_id = c_str(&c);
        int rc = c_check(&c, "payments", out);
        if (rc) return rc;
        if (w[i] >= 0) {
            order *o = os[w[i]];
            o->payments[o->npayments++] = p;
        }
    }
    return 0;
}

static int assemble_products(const str *id, const sqlres *res, buf *out, product ***out_products, size_t *nproducts) {
    const sqlres *r = &res[0];
    product **ps = AR_NEW(product *, r->nrows + 1);
    size_t n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        product *p = AR_NEW(product, 1);
        p->product_id = c_str(&c);
        p->name = c_str(&c);
        int rc = c_check(&c, "products", out);
        if (rc) return rc;
        if (id && !str_eq(p->product_id, *id)) continue;
        ps[n++] = p;
    }
    *out_products = ps;
    *nproducts = n;
    if (!n) return 0;
    const str **ids = AR_NEW(const str *, n);
    for (size_t i = 0; i < n; i++) ids[i] = &ps[i]->product_id;
    owners ow;
    owners_init(&ow, n, ids);
    size_t *cnt = AR_NEW(size_t, n);
    r = &res[1];
    long *w = row_owners(r, &ow, cnt, n);
    for (size_t k = 0; k < n; k++) ps[k]->variants = AR_NEW(variant, cnt[k] + 1);
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        c_str(&c);
        variant v = {0};
        v.item_id = c_str(&c);
        v.available = c_bool(&c);
        v.price = c_float(&c);
        int rc = c_check(&c, "variants", out);
        if (rc) return rc;
        if (w[i] >= 0) {
            product *p = ps[w[i]];
            p->variants[p->nvariants++] = v;
        }
    }
    /* variant options: by (product, item id) */
    r = &res[2];
    long *wp = AR_NEW(long, r->nrows + 1);
    variant **wv = AR_NEW(variant *, r->nrows + 1);
    for (size_t i = 0; i < r->nrows; i++) {
        cells c = row_cells(r, i);
        str pid = c_str(&c), iid = c_str(&c);
        c_str(&c);
        c_str(&c);
        int rc = c_check(&c, "variant_options", out);
        if (rc) return rc;
        wp[i] = owner_of(&ow, pid);
        wv[i] = wp[i] >= 0 ? product_variant(ps[wp[i]], iid) : NULL;
        if (wv[i]) wv[i]->options.n++;
    }
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < ps[k]->nvariants; j++) {
            variant *v = &ps[k]->variants[j];
            v->options.v = AR_NEW(option, v->options.n + 1);
            v->options.n = 0;
        }
    for (size_t i = 0; i < r->nrows; i++) {
        if (!wv[i]) continue;
        options *op = &wv[i]->options;
        op->v[op->n++] = (option){CELL(r, i, 2)->s, CELL(r, i, 3)->s};
    }
    return 0;
}

/* ---- loaders ------------------------------------------------------------------ */

int load_records(buf *out,
                 const str *ord_ids, size_t nord, order **orders,
                 const str *usr_ids, size_t nusr, user **users,
                 const str *prod_ids, size_t nprod, product **products) {
    if (nord + nusr + nprod == 0) return 0;
    sqlbatch *b = sql_batch();
    for (size_t i = 0; i < nord; i++) add_reads(b, order_reads, 7, &ord_ids[i]);
    for (size_t i = 0; i < nusr; i++) add_reads(b, user_reads, 3, &usr_ids[i]);
    for (size_t i = 0; i < nprod; i++) add_reads(b, product_reads, 3, &prod_ids[i]);
    sqlres *res;
    int rc = sql_run(b, "query", out, &res);
    if (rc) return rc;
    size_t k = 0, n;
    for (size_t i = 0; i < nord; i++, k += 7) {
        order **os;
        if ((rc = assemble_orders(&ord_ids[i], res + k, out, &os, &n))) return rc;
        orders[i] = n ? os[0] : NULL;
    }
    for (size_t i = 0; i < nusr; i++, k += 3) {
        user **us;
        if ((rc = assemble_users(&usr_ids[i], res + k, out, &us, &n))) return rc;
        users[i] = n ? us[0] : NULL;
    }
    for (size_t i = 0; i < nprod; i++, k += 3) {
        product **ps;
        if ((rc = assemble_products(&prod_ids[i], res + k, out, &ps, &n))) return rc;
        products[i] = n ? ps[0] : NULL;
    }
    return 0;
}

int load_order(buf *out, str id, order **o) { return load_records(out, &id, 1, o, NULL, 0, NULL, NULL, 0, NULL); }
int load_user(buf *out, str id, user **u) { return load_records(out, NULL, 0, NULL, &id, 1, u, NULL, 0, NULL); }
int load_product(buf *out, str id, product **p) { return load_records(out, NULL, 0, NULL, NULL, 0, NULL, &id, 1, p); }

payment_method *user_method(const user *u, str id) {
    for (size_t i = 0; i < u->nmethods; i++)
        if (str_eq(u->methods[i].id, id)) return &u->methods[i];
    return NULL;
}

variant *product_variant(const product *p, str item_id) {
    for (size_t i = 0; i < p->nvariants; i++)
        if (str_eq(p->variants[i].item_id, item_id)) return &p->variants[i];
    return NULL;
}

/* read_all runs a reader's statements one per host call (the Go module's
 * export: no answer holds more than one table). */
static int read_all(const readstmt *rs, size_t n, buf *out, sqlres **res) {
    sqlres *all = AR_NEW(sqlres, n);
    for (size_t i = 0; i < n; i++) {
        sqlbatch *b = sql_batch();
        add_reads(b, rs + i, 1, NULL);
        sqlres *r;
        int rc = sql_run(b, "query", out, &r);
        if (rc) return rc;
        all[i] = r[0];
    }
    *res = all;
    return 0;
}

/* ---- writers -------------------------------------------------------------------- */

void w_address(buf *b, const address *a) {
    buf_puts(b, "{\"address1\":");
    w_str(b, a->address1);
    buf_puts(b, ",\"address2\":");
    w_str(b, a->address2);
    buf_puts(b, ",\"city\":");
    w_str(b, a->city);
    buf_puts(b, ",\"country\":");
    w_str(b, a->country);
    buf_puts(b, ",\"state\":");
    w_str(b, a->state);
    buf_puts(b, ",\"zip\":");
    w_str(b, a->zip);
    buf_putc(b, '}');
}

static void w_options(buf *b, const options *o) {
    buf_putc(b, '{');
    for (size_t i = 0; i < o->n; i++) {
        if (i) buf_putc(b, ',');
        w_str(b, o->v[i].name);
        buf_putc(b, ':');
        w_str(b, o->v[i].value);
    }
    buf_putc(b, '}');
}

static void w_method(buf *b, const payment_method *m) {
    buf_puts(b, "{\"source\":");
    w_str(b, m->source);
    buf_puts(b, ",\"id\":");
    w_str(b, m->id);
    if (m->has_brand) {
        buf_puts(b, ",\"brand\":");
        w_str(b, m->brand);
    }
    if (m->has_last_four) {
        buf_puts(b, ",\"last_four\":");
        w_str(b, m->last_four);
    }
    if (m->has_balance) {
        buf_puts(b, ",\"balance\":");
        w_pyfloat(b, m->balance);
    }
    buf_putc(b, '}');
}

void w_user(buf *b, const user *u) {
    buf_puts(b, "{\"user_id\":");
    w_str(b, u->user_id);
    buf_puts(b, ",\"name\":{\"first_name\":");
    w_str(b, u->first_name);
    buf_puts(b, ",\"last_name\":");
    w_str(b, u->last_name);
    buf_puts(b, "},\"address\":");
    w_address(b, &u->address);
    buf_puts(b, ",\"email\":");
    w_str(b, u->email);
    buf_puts(b, ",\"payment_methods\":{");
    for (size_t i = 0; i < u->nmethods; i++) {
        if (i) buf_putc(b, ',');
        w_str(b, u->methods[i].id);
        buf_putc(b, ':');
        w_method(b, &u->methods[i]);
    }
    buf_puts(b, "},\"orders\":");
    w_strlist(b, u->orders, u->norders);
    buf_putc(b, '}');
}

void w_variant(buf *b, const variant *v) {
    buf_puts(b, "{\"item_id\":");
    w_str(b, v->item_id);
    buf_puts(b, ",\"options\":");
    w_options(b, &v->options);
    buf_puts(b, v->available ? ",\"available\":true,\"price\":" : ",\"available\":false,\"price\":");
    w_pyfloat(b, v->price);
    buf_putc(b, '}');
}

void w_product(buf *b, const product *p) {
    buf_puts(b, "{\"name\":");
    w_str(b, p->name);
    buf_puts(b, ",\"product_id\":");
    w_str(b, p->product_id);
    buf_puts(b, ",\"variants\":{");
    for (size_t i = 0; i < p->nvariants; i++) {
        if (i) buf_putc(b, ',');
        w_str(b, p->variants[i].item_id);
        buf_putc(b, ':');
        w_variant(b, &p->variants[i]);
    }
    buf_puts(b, "}}");
}

static void w_optstr(buf *b, const char *key, const optstr *s, bool file_shape) {
    if (!s->set && file_shape) return;
    buf_puts(b, key);
    if (s->set) w_str(b, s->v);
    else buf_puts(b, "null");
}

static void w_optlist(buf *b, const char *key, const strlist *l, bool file_shape) {
    if (!l->set && file_shape) return;
    buf_puts(b, key);
    if (l->set) w_strlist(b, l->v, l->n);
    else buf_puts(b, "null");
}

void w_order(buf *b, const order *o, bool file_shape) {
    buf_puts(b, "{\"order_id\":");
    w_str(b, o->order_id);
    buf_puts(b, ",\"user_id\":");
    w_str(b, o->user_id);
    buf_puts(b, ",\"address\":");
    w_address(b, &o->address);
    buf_puts(b, ",\"items\":[");
    for (size_t i = 0; i < o->nitems; i++) {
        const order_item *it = &o->items[i];
        if (i) buf_putc(b, ',');
        buf_puts(b, "{\"name\":");
        w_str(b, it->name);
        buf_puts(b, ",\"product_id\":");
        w_str(b, it->product_id);
        buf_puts(b, ",\"item_id\":");
        w_str(b, it->item_id);
        buf_puts(b, ",\"price\":");
        w_pyfloat(b, it->price);
        buf_puts(b, ",\"options\":");
        w_options(b, &it->options);
        buf_putc(b, '}');
    }
    buf_puts(b, "],\"status\":");
    w_str(b, o->status);
    buf_puts(b, ",\"fulfillments\":[");
    for (size_t i = 0; i < o->nfulfillments; i++) {
        const fulfillment *f = &o->fulfillments[i];
        if (i) buf_putc(b, ',');
        buf_puts(b, "{\"tracking_id\":");
        w_strlist(b, f->tracking_ids, f->ntracking);
        buf_puts(b, ",\"item_ids\":");
        w_strlist(b, f->item_ids, f->nitem_ids);
        buf_putc(b, '}');
    }
    buf_puts(b, "],\"payment_history\":[");
    for (size_t i = 0; i < o->npayments; i++) {
        const payment *p = &o->payments[i];
        if (i) buf_putc(b, ',');
        buf_puts(b, "{\"transaction_type\":");
        w_str(b, p->transaction_type);
        buf_puts(b, ",\"amount\":");
        w_pyfloat(b, p->amount);
        buf_puts(b, ",\"payment_method_id\":");
        w_str(b, p->payment_method_id);
        buf_putc(b, '}');
    }
    buf_putc(b, ']');
    w_optstr(b, ",\"cancel_reason\":", &o->cancel_reason, file_shape);
    w_optlist(b, ",\"exchange_items\":", &o->exchange_items, file_shape);
    w_optlist(b, ",\"exchange_new_items\":", &o->exchange_new_items, file_shape);
    w_optstr(b, ",\"exchange_payment_method_id\":", &o->exchange_payment_method_id, file_shape);
    if (o->exchange_price_difference.set) {
        buf_puts(b, ",\"exchange_price_difference\":");
        w_pyfloat(b, o->exchange_price_difference.v);
    } else if (!file_shape) buf_puts(b, ",\"exchange_price_difference\":null");
    w_optlist(b, ",\"return_items\":", &o->return_items, file_shape);
    w_optstr(b, ",\"return_payment_method_id\":", &o->return_payment_method_id, file_shape);
    buf_putc(b, '}');
}

/* ---- the export hook ---------------------------------------------------------------- */

/* t_export: the whole state in db.json's shape (records.DBFile). */
int t_export(const jval *args, buf *out) {
    (void)args;
    sqlres *res;
    int rc;
    size_t n;
    product **ps;
    user **us;
    order **os;
    size_t nps, nus;
    if ((rc = read_all(product_reads, 3, out, &res))) return rc;
    if ((rc = assemble_products(NULL, res, out, &ps, &nps))) return rc;
    if ((rc = read_all(user_reads, 3, out, &res))) return rc;
    if ((rc = assemble_users(NULL, res, out, &us, &nus))) return rc;
    if ((rc = read_all(order_reads, 7, out, &res))) return rc;
    if ((rc = assemble_orders(NULL, res, out, &os, &n))) return rc;
    out->len = 0;
    buf_puts(out, "{\"products\":{");
    for (size_t i = 0; i < nps; i++) {
        if (i) buf_putc(out, ',');
        w_str(out, ps[i]->product_id);
        buf_putc(out, ':');
        w_product(out, ps[i]);
    }
    buf_puts(out, "},\"users\":{");
    for (size_t i = 0; i < nus; i++) {
        if (i) buf_putc(out, ',');
        w_str(out, us[i]->user_id);
        buf_putc(out, ':');
        w_user(out, us[i]);
    }
    buf_puts(out, "},\"orders\":{");
    for (size_t i = 0; i < n; i++) {
        if (i) buf_putc(out, ',');
        w_str(out, os[i]->order_id);
        buf_putc(out, ':');
        w_order(out, os[i], true);
    }
    buf_puts(out, "}}");
    return R_JSON;
}
