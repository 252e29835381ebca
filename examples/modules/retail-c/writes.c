/*
 * writes.c: the seven write tools of the retail module, a port of
 * examples/modules/retail/tools_write.go (the reference: every check, in the
 * same order, with the same tool-error text; the same float64 arithmetic in
 * the same operation order, so amounts and balances are bit-identical; the
 * same rows written).
 *
 * Host crossings per call: the order (one batch), then the user and the
 * products the tool looks up (one batch, the Go module's prefetch), then the
 * queued writes (one batch, sent by main.c after the tool succeeds). The
 * writes leave the same rows as the Go module's statements, in its order,
 * with fewer statements for the host's keyed-write fast path
 * (docs/design/038-write-fast-path.md): rows of one table written together
 * (a refund per payment, an item's options) go in one multi-row INSERT, and
 * a changed item that keeps its number of options gets an UPDATE of each
 * option that differs instead of a DELETE and INSERT of all of them.
 *
 * Nothing is queued before every check has passed, so a tool error writes
 * nothing (main.c sends queued writes only for a successful result anyway).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "retail.h"

/* ---- small helpers ------------------------------------------------------- */

/* fail3 answers the tool error a + s + b (s may hold any bytes). */
static int fail3(buf *out, const char *a, str s, const char *b) {
    out->len = 0;
    buf_puts(out, a);
    buf_put_s(out, s);
    buf_puts(out, b);
    return R_TOOL_ERROR;
}

static bool str_contains(str s, const char *sub) {
    size_t m = strlen(sub);
    if (m == 0) return true;
    for (size_t i = 0; i + m <= s.n; i++)
        if (memcmp(s.p + i, sub, m) == 0) return true;
    return false;
}

static size_t count_str(const str *list, size_t n, str s) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (str_eq(list[i], s)) c++;
    return c;
}

static size_t count_item(const order *o, str id) {
    size_t c = 0;
    for (size_t i = 0; i < o->nitems; i++)
        if (str_eq(o->items[i].item_id, id)) c++;
    return c;
}

/* first_item is the position of the first order item with the id, or -1. */
static long first_item(const order *o, str id) {
    for (size_t i = 0; i < o->nitems; i++)
        if (str_eq(o->items[i].item_id, id)) return (long)i;
    return -1;
}

/* missing_item returns the first id of ids (in order) the list holds more
 * often than the order does (Go: countOf(in, id) > countOf(all, id)), or NULL. */
static const str *missing_item(const order *o, const str *ids, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (count_str(ids, n, ids[i]) > count_item(o, ids[i])) return &ids[i];
    return NULL;
}

/* Go's sort.Strings: byte order (UTF-8 byte order is code point order). */
static int cmp_str(const void *a, const void *b) {
    const str *x = a, *y = b;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = m ? memcmp(x->p, y->p, m) : 0;
    if (c) return c;
    return (x->n > y->n) - (x->n < y->n);
}

/* sorted is sortedCopy: a set (never nil) list, sorted. */
static strlist sorted(const str *v, size_t n) {
    strlist l = {true, AR_NEW(str, n ? n : 1), n};
    if (n) memcpy(l.v, v, n * sizeof(str));
    qsort(l.v, n, sizeof(str), cmp_str);
    return l;
}

static double balance(const payment_method *m) { return m->has_balance ? m->balance : 0; }
static bool is_gift_card(const payment_method *m) { return str_eqz(m->source, "gift_card"); }

static void set_balance(payment_method *m, double b) {
    m->has_balance = true;
    m->balance = b;
}

/* append_payment grows the order's payment history by one entry. */
static void append_payment(order *o, const char *kind, double amount, str method) {
    payment *p = AR_NEW(payment, o->npayments + 1);
    if (o->npayments) memcpy(p, o->payments, o->npayments * sizeof(payment));
    p[o->npayments] = (payment){(str){kind, strlen(kind)}, amount, method};
    o->payments = p;
    o->npayments++;
}

static sqlv opt_str(optstr s) { return s.set ? SV_STR(s.v) : SV_NULL(); }
static sqlv opt_num(optnum x) { return x.set ? SV_FLOAT(x.v) : SV_NULL(); }
static sqlv opt_list(strlist l) { return l.set ? SV_STR(json_strlist(l.v, l.n)) : SV_NULL(); }

/* ---- writers (the Go module's saveOrder, addPayments, saveBalance, saveItem) */

static void save_order(const order *o) {
    sqlv *a = AR_NEW(sqlv, 15);
    const address *d = &o->address;
    a[0] = SV_STR(d->address1);
    a[1] = SV_STR(d->address2);
    a[2] = SV_STR(d->city);
    a[3] = SV_STR(d->country);
    a[4] = SV_STR(d->state);
    a[5] = SV_STR(d->zip);
    a[6] = SV_STR(o->status);
    a[7] = opt_str(o->cancel_reason);
    a[8] = opt_list(o->exchange_items);
    a[9] = opt_list(o->exchange_new_items);
    a[10] = opt_str(o->exchange_payment_method_id);
    a[11] = opt_num(o->exchange_price_difference);
    a[12] = opt_list(o->return_items);
    a[13] = opt_str(o->return_payment_method_id);
    a[14] = SV_STR(o->order_id);
    sql_queue("UPDATE orders SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ?, status = ?, "
              "cancel_reason = ?, exchange_items = ?, exchange_new_items = ?, exchange_payment_method_id = ?, "
              "exchange_price_difference = ?, return_items = ?, return_payment_method_id = ? WHERE order_id = ?",
              15, a);
}

/* rows_sql is "<head> (?, ...)" with rows groups of cols placeholders,
 * comma separated, in the arena. */
static const char *rows_sql(const char *head, size_t cols, size_t rows) {
    size_t hl = strlen(head), gl = 2 + 3 * cols; /* "(?" ", ?"* ")" */
    char *s = AR_NEW(char, hl + rows * (gl + 2) + 1), *p = s;
    memcpy(p, head, hl);
    p += hl;
    for (size_t r = 0; r < rows; r++) {
        if (r) *p++ = ',';
        *p++ = ' ';
        *p++ = '(';
        for (size_t c = 0; c < cols; c++) {
            if (c) {
                *p++ = ',';
                *p++ = ' ';
            }
            *p++ = '?';
        }
        *p++ = ')';
    }
    *p = 0;
    return s;
}

/* add_payments inserts the order's payment history entries from position
 * from on, in one INSERT. */
static void add_payments(const order *o, size_t from) {
    size_t n = o->npayments - from;
    if (n == 0) return;
    sqlv *a = AR_NEW(sqlv, 5 * n);
    for (size_t i = 0; i < n; i++) {
        const payment *p = &o->payments[from + i];
        a[5 * i + 0] = SV_STR(o->order_id);
        a[5 * i + 1] = SV_INT((int64_t)(from + i));
        a[5 * i + 2] = SV_STR(p->transaction_type);
        a[5 * i + 3] = SV_FLOAT(p->amount);
        a[5 * i + 4] = SV_STR(p->payment_method_id);
    }
    sql_queue(rows_sql("INSERT INTO payments (order_id, pos, transaction_type, amount, payment_method_id) VALUES", 5, n),
              5 * n, a);
}

static void save_balance(str user_id, const payment_method *m) {
    sqlv *a = AR_NEW(sqlv, 3);
    a[0] = m->has_balance ? SV_FLOAT(m->balance) : SV_NULL();
    a[1] = SV_STR(user_id);
    a[2] = SV_STR(m->id);
    sql_queue("UPDATE payment_methods SET balance = ? WHERE user_id = ? AND payment_method_id = ?", 3, a);
}

/* save_item writes order item pos and its options, which were old: the
 * same rows as the Go module's DELETE of the item's options and INSERT of
 * the new ones, but when the item keeps its number of options only the
 * options that differ are updated (a variant of the same product usually
 * differs in one or two), fewer statements and rows for the host. */
static void save_item(const order *o, size_t pos, const options *old) {
    const order_item *it = &o->items[pos];
    sqlv *a = AR_NEW(sqlv, 6);
    a[0] = SV_STR(it->item_id);
    a[1] = SV_STR(it->product_id);
    a[2] = SV_STR(it->name);
    a[3] = SV_FLOAT(it->price);
    a[4] = SV_STR(o->order_id);
    a[5] = SV_INT((int64_t)pos);
    sql_queue("UPDATE order_items SET item_id = ?, product_id = ?, name = ?, price = ? WHERE order_id = ? AND pos = ?", 6, a);
    size_t n = it->options.n;
    if (old->n == n) {
        for (size_t k = 0; k < n; k++) {
            const option *x = &old->v[k], *y = &it->options.v[k];
            if (str_eq(x->name, y->name) && str_eq(x->value, y->value)) continue;
            sqlv *u = AR_NEW(sqlv, 5);
            u[0] = SV_STR(y->name);
            u[1] = SV_STR(y->value);
            u[2] = SV_STR(o->order_id);
            u[3] = SV_INT((int64_t)pos);
            u[4] = SV_INT((int64_t)k);
            sql_queue("UPDATE order_item_options SET name = ?, value = ? WHERE order_id = ? AND item_pos = ? AND pos = ?", 5, u);
        }
        return;
    }
    sqlv *d = AR_NEW(sqlv, 2);
    d[0] = SV_STR(o->order_id);
    d[1] = SV_INT((int64_t)pos);
    sql_queue("DELETE FROM order_item_options WHERE order_id = ? AND item_pos = ?", 2, d);
    if (n == 0) return;
    sqlv *v = AR_NEW(sqlv, 5 * n);
    for (size_t k = 0; k < n; k++) {
        v[5 * k + 0] = SV_STR(o->order_id);
        v[5 * k + 1] = SV_INT((int64_t)pos);
        v[5 * k + 2] = SV_INT((int64_t)k);
        v[5 * k + 3] = SV_STR(it->options.v[k].name);
        v[5 * k + 4] = SV_STR(it->options.v[k].value);
    }
    sql_queue(rows_sql("INSERT INTO order_item_options (order_id, item_pos, pos, name, value) VALUES", 5, n), 5 * n, v);
}

/* ---- lookups ------------------------------------------------------------- */

/* get_order is getOrder: the order, or the tool error "Order not found". */
static int get_order(buf *out, str id, order **o) {
    int rc = load_order(out, id, o);
    if (rc) return rc;
    if (!*o) return tool_error(out, "Order not found");
    return 0;
}

/* ---- lean reads ---------------------------------------------------------------
 * The write tools need less of the user and the products than the full
 * records the Go module reads (users + payment_methods + user_orders; products
 * + variants + the options of every variant): a user's payment methods, a
 * product's variants, and the options of one variant (the last new item,
 * which modify_pending_order_items copies into the changed items). They are
 * read here with one statement each instead of three, and decoded directly.
 * The answers are the Go module's: rows are kept only when their key equals
 * the id exactly (the engine's collation may match more loosely, as
 * records.Assemble* filter too); a user without a payment method row, or a
 * product without a variant row, is looked up in users / products (a second
 * host call, only then) to tell "User not found" / "Product not found" from
 * "Payment method not found" / "Variant not found". That a payment method
 * row implies its user row (and a variant row its product row) holds for
 * every state the retail tools can produce: the schema is loaded from
 * db.json, and no tool deletes users or products or inserts methods or
 * variants. */

static const char *const SQL_METHODS =
    "SELECT user_id, payment_method_id, source, brand, last_four, balance FROM payment_methods WHERE user_id = ? ORDER BY user_id, pos";
static const char *const SQL_VARIANTS =
    "SELECT product_id, item_id, available, price FROM variants WHERE product_id = ? ORDER BY product_id, pos";
static const char *const SQL_VARIANT_OPTIONS =
    "SELECT name, value FROM variant_options WHERE product_id = ? AND item_id = ? ORDER BY pos";

/* cell readers; a cell of an unexpected type is a module bug (the schema
 * fixes the types) */
static bool cell_str(const sqlv *v, str *s) {
    if (v->t != V_STR && v->t != V_BYTES && v->t != V_DECIMAL && v->t != V_JSON) return false;
    *s = v->s;
    return true;
}

static bool cell_float(const sqlv *v, double *f) {
    switch (v->t) {
    case V_FLOAT: *f = v->f; return true;
    case V_INT: *f = (double)v->i; return true;
    case V_UINT: *f = (double)v->u; return true;
    default: return false;
    }
}

static bool cell_bool(const sqlv *v, bool *b) {
    switch (v->t) {
    case V_INT: case V_BOOL: *b = v->i != 0; return true;
    case V_UINT: *b = v->u != 0; return true;
    default: return false;
    }
}

static int bad_cell(buf *out, const char *table) {
    out->len = 0;
    buf_puts(out, "retail-c: ");
    buf_puts(out, table);
    buf_puts(out, ": a cell of an unexpected type");
    return R_INTERNAL;
}

/* methods_of fills u (user_id, payment methods) from a SQL_METHODS result. */
static int methods_of(buf *out, const sqlres *r, str user_id, user *u) {
    u->user_id = user_id;
    u->methods = AR_NEW(payment_method, r->nrows ? r->nrows : 1);
    u->nmethods = 0;
    if (r->nrows && r->ncols != 6) return bad_cell(out, "payment_methods");
    for (size_t i = 0; i < r->nrows; i++) {
        str uid;
        payment_method m = {0};
        const sqlv *c = CELL(r, i, 0);
        if (!cell_str(&c[0], &uid) || !cell_str(&c[1], &m.id) || !cell_str(&c[2], &m.source))
            return bad_cell(out, "payment_methods");
        if (c[3].t != V_NULL) {
            if (!cell_str(&c[3], &m.brand)) return bad_cell(out, "payment_methods");
            m.has_brand = true;
        }
        if (c[4].t != V_NULL) {
            if (!cell_str(&c[4], &m.last_four)) return bad_cell(out, "payment_methods");
            m.has_last_four = true;
        }
        if (c[5].t != V_NULL) {
            if (!cell_float(&c[5], &m.balance)) return bad_cell(out, "payment_methods");
            m.has_balance = true;
        }
        if (str_eq(uid, user_id)) u->methods[u->nmethods++] = m;
    }
    return 0;
}

/* variants_of fills p (product_id, variants without options) from a
 * SQL_VARIANTS result; *any: some row belongs to the product. */
static int variants_of(buf *out, const sqlres *r, str pid, product *p) {
    p->product_id = pid;
    p->variants = AR_NEW(variant, r->nrows ? r->nrows : 1);
    p->nvariants = 0;
    if (r->nrows && r->ncols != 4) return bad_cell(out, "variants");
    for (size_t i = 0; i < r->nrows; i++) {
        str rp;
        variant v = {0};
        const sqlv *c = CELL(r, i, 0);
        if (!cell_str(&c[0], &rp) || !cell_str(&c[1], &v.item_id) || !cell_bool(&c[2], &v.available) ||
            !cell_float(&c[3], &v.price))
            return bad_cell(out, "variants");
        if (str_eq(rp, pid)) p->variants[p->nvariants++] = v;
    }
    return 0;
}

static int options_of(buf *out, const sqlres *r, options *o) {
    o->v = AR_NEW(option, r->nrows ? r->nrows : 1);
    o->n = r->nrows;
    if (r->nrows && r->ncols != 2) return bad_cell(out, "variant_options");
    for (size_t i = 0; i < r->nrows; i++)
        if (!cell_str(CELL(r, i, 0), &o->v[i].name) || !cell_str(CELL(r, i, 1), &o->v[i].value))
            return bad_cell(out, "variant_options");
    return 0;
}

/* exists runs one keyed SELECT and tells whether a row's first cell equals id. */
static int exists(buf *out, const char *sql, str id, bool *found) {
    sqlbatch *b = sql_batch();
    sqlv *a = AR_NEW(sqlv, 1);
    a[0] = SV_STR(id);
    sql_add(b, sql, 1, a);
    sqlres *r;
    int rc = sql_run(b, "query", out, &r);
    if (rc) return rc;
    *found = false;
    for (size_t i = 0; i < r[0].nrows && !*found; i++) {
        str s;
        if (r[0].ncols && cell_str(CELL(&r[0], i, 0), &s) && str_eq(s, id)) *found = true;
    }
    return 0;
}

/* user_known: the user has payment methods (so exists), or was looked up. */
typedef struct {
    user u;
    bool checked; /* existence known */
    bool missing; /* no such user */
} lean_user;

/* method_of is getPaymentMethod: "User not found" / "Payment method not found". */
static int method_of(buf *out, lean_user *lu, str id, payment_method **m) {
    if (!lu->checked) {
        if (lu->u.nmethods > 0) {
            lu->checked = true;
        } else {
            bool found;
            int rc = exists(out, "SELECT user_id, first_name, last_name, address1, address2, city, country, state, zip, email FROM users "
                                 "WHERE user_id = ? ORDER BY pos", lu->u.user_id, &found);
            if (rc) return rc;
            lu->checked = true;
            lu->missing = !found;
        }
    }
    if (lu->missing) return tool_error(out, "User not found");
    *m = user_method(&lu->u, id);
    if (!*m) return tool_error(out, "Payment method not found");
    return 0;
}

/* read_user reads a user's payment methods (one host call). */
static int read_user(buf *out, str user_id, lean_user *lu) {
    memset(lu, 0, sizeof *lu);
    sqlbatch *b = sql_batch();
    sqlv *a = AR_NEW(sqlv, 1);
    a[0] = SV_STR(user_id);
    sql_add(b, SQL_METHODS, 1, a);
    sqlres *r;
    int rc = sql_run(b, "query", out, &r);
    if (rc) return rc;
    return methods_of(out, &r[0], user_id, &lu->u);
}

/* prefetch reads, in one host call, the order's user's payment methods, the
 * variants of the distinct products (first-seen order) of the order items
 * the ids name (the Go module's prefetch(ctx, {o.UserID}, productsOf(o,
 * ids))), and, when last_options, the options of the last pair's new
 * variant. */
typedef struct {
    lean_user lu;
    str *pids;
    product *prods;
    bool *checked, *missing; /* per product, as lean_user */
    size_t nprod;
} prefetched;

static int prefetch(buf *out, const order *o, const str *ids, const str *nids, size_t n, bool last_options,
                    prefetched *pf) {
    memset(pf, 0, sizeof *pf);
    pf->pids = AR_NEW(str, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        long pos = first_item(o, ids[i]);
        if (pos < 0) continue;
        str pid = o->items[pos].product_id;
        bool seen = false;
        for (size_t k = 0; k < pf->nprod && !seen; k++) seen = str_eq(pf->pids[k], pid);
        if (!seen) pf->pids[pf->nprod++] = pid;
    }
    size_t np = pf->nprod ? pf->nprod : 1;
    pf->prods = AR_NEW(product, np);
    pf->checked = AR_NEW(bool, np);
    pf->missing = AR_NEW(bool, np);

    sqlbatch *b = sql_batch();
    sqlv *a = AR_NEW(sqlv, 1 + pf->nprod + 2);
    a[0] = SV_STR(o->user_id);
    sql_add(b, SQL_METHODS, 1, &a[0]);
    for (size_t k = 0; k < pf->nprod; k++) {
        a[1 + k] = SV_STR(pf->pids[k]);
        sql_add(b, SQL_VARIANTS, 1, &a[1 + k]);
    }
    long lpos = n ? first_item(o, ids[n - 1]) : -1;
    bool opts = last_options && lpos >= 0;
    if (opts) {
        a[1 + pf->nprod] = SV_STR(o->items[lpos].product_id);
        a[2 + pf->nprod] = SV_STR(nids[n - 1]);
        sql_add(b, SQL_VARIANT_OPTIONS, 2, &a[1 + pf->nprod]);
    }
    sqlres *r;
    int rc = sql_run(b, "query", out, &r);
    if (rc) return rc;
    if ((rc = methods_of(out, &r[0], o->user_id, &pf->lu.u))) return rc;
    for (size_t k = 0; k < pf->nprod; k++)
        if ((rc = variants_of(out, &r[1 + k], pf->pids[k], &pf->prods[k]))) return rc;
    if (opts) {
        options op;
        if ((rc = options_of(out, &r[1 + pf->nprod], &op))) return rc;
        for (size_t k = 0; k < pf->nprod; k++)
            if (str_eq(pf->pids[k], o->items[lpos].product_id)) {
                variant *v = product_variant(&pf->prods[k], nids[n - 1]);
                if (v) v->options = op;
            }
    }
    return 0;
}

/* prefetched_product is getProduct on the prefetched products: NULL with
 * the tool error "Product not found" in out (rc) when there is none. */
static int prefetched_product(buf *out, prefetched *pf, str pid, product **p) {
    for (size_t k = 0; k < pf->nprod; k++) {
        if (!str_eq(pf->pids[k], pid)) continue;
        if (!pf->checked[k]) {
            pf->checked[k] = true;
            if (pf->prods[k].nvariants == 0) {
                bool found;
                int rc = exists(out, "SELECT product_id, name FROM products WHERE product_id = ? ORDER BY pos", pid, &found);
                if (rc) return rc;
                pf->missing[k] = !found;
            }
        }
        if (pf->missing[k]) break;
        *p = &pf->prods[k];
        return 0;
    }
    return tool_error(out, "Product not found");
}

/* price_diff is the Go module's priceDiff: the sum of new minus old prices
 * over the pairs, in order, checking each pair; *last is the last variant
 * looked at. */
static int price_diff(buf *out, const order *o, prefetched *pf, const str *old, const str *nw, size_t n,
                      bool reject_same, double *diff, variant **last) {
    double d = 0.0;
    *last = NULL;
    for (size_t i = 0; i < n; i++) {
        if (reject_same && str_eq(old[i], nw[i]))
            return tool_error(out, "The new item id should be different from the old item id");
        long pos = first_item(o, old[i]);
        if (pos < 0) return fail3(out, "Item ", old[i], " not found");
        const order_item *it = &o->items[pos];
        product *p;
        int rc = prefetched_product(out, pf, it->product_id, &p);
        if (rc) return rc;
        variant *v = product_variant(p, nw[i]);
        if (!v) return tool_error(out, "Variant not found");
        if (!v->available) return fail3(out, "New item ", nw[i], " not found or available");
        d += v->price - it->price;
        *last = v;
    }
    *diff = d;
    return 0;
}

/* ---- the tools ----------------------------------------------------------- */

/* cancel_pending_order: a pending order is cancelled and every entry of its
 * payment history refunded (gift cards at once, balance rounded to cents).
 * Arguments: order_id, reason ("no longer needed" | "ordered by mistake").
 * Returns the order. */
int t_cancel_pending_order(const jval *args, buf *out) {
    str oid = arg_str(args, "order_id"), reason = arg_str(args, "reason");
    order *o;
    int rc = get_order(out, oid, &o);
    if (rc) return rc;
    if (!str_eqz(o->status, "pending")) return tool_error(out, "Non-pending order cannot be cancelled");
    if (!str_eqz(reason, "no longer needed") && !str_eqz(reason, "ordered by mistake"))
        return tool_error(out, "Invalid reason");
    size_t n = o->npayments;
    lean_user lu = {0};
    if (n > 0) { /* Go loads the user at the first payment */
        if ((rc = read_user(out, o->user_id, &lu))) return rc;
    }
    payment_method **touched = AR_NEW(payment_method *, n ? n : 1);
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        const payment *p = &o->payments[i];
        payment_method *m;
        if ((rc = method_of(out, &lu, p->payment_method_id, &m))) return rc;
        if (is_gift_card(m)) {
            set_balance(m, py_round2(balance(m) + p->amount));
            touched[nt++] = m;
        }
    }
    o->status = S("cancelled");
    o->cancel_reason = (optstr){true, reason};
    payment *ph = AR_NEW(payment, 2 * n ? 2 * n : 1);
    if (n) memcpy(ph, o->payments, n * sizeof(payment));
    for (size_t i = 0; i < n; i++)
        ph[n + i] = (payment){S("refund"), o->payments[i].amount, o->payments[i].payment_method_id};
    o->payments = ph;
    o->npayments = 2 * n;
    for (size_t i = 0; i < nt; i++) save_balance(o->user_id, touched[i]);
    save_order(o);
    add_payments(o, n);
    w_order(out, o, false);
    return R_JSON;
}

/* modify_pending_order_items: items of a pending order become other variants
 * of the same products; the price difference is paid or refunded with the
 * payment method. As in the reference, every changed item takes the price
 * and options of the last new variant checked (its own new item id, though).
 * Arguments: order_id, item_ids, new_item_ids, payment_method_id. Returns
 * the order. */
int t_modify_pending_order_items(const jval *args, buf *out) {
    str oid = arg_str(args, "order_id"), pmid = arg_str(args, "payment_method_id");
    str *ids = NULL, *nids = NULL;
    size_t n = 0, nn = 0;
    arg_strlist(args, "item_ids", &ids, &n);
    arg_strlist(args, "new_item_ids", &nids, &nn);
    order *o;
    int rc = get_order(out, oid, &o);
    if (rc) return rc;
    if (!str_eqz(o->status, "pending")) return tool_error(out, "Non-pending order cannot be modified");
    const str *miss = missing_item(o, ids, n);
    if (miss) return fail3(out, "", *miss, " not found");
    if (n != nn) return tool_error(out, "The number of items to be exchanged should match");
    prefetched pf;
    if ((rc = prefetch(out, o, ids, nids, n, true, &pf))) return rc;
    double diff;
    variant *last;
    if ((rc = price_diff(out, o, &pf, ids, nids, n, true, &diff, &last))) return rc;
    payment_method *m;
    if ((rc = method_of(out, &pf.lu, pmid, &m))) return rc;
    if (is_gift_card(m) && balance(m) < diff)
        return tool_error(out, "Insufficient gift card balance to pay for the new item");

    size_t from = o->npayments;
    append_payment(o, diff > 0 ? "payment" : "refund", fabs(diff), pmid);
    if (is_gift_card(m)) set_balance(m, py_round2(balance(m) - diff));
    /* the items are copied before they change: o's arrays came from the loader */
    const order_item *loaded = o->items;
    order_item *items = AR_NEW(order_item, o->nitems ? o->nitems : 1);
    if (o->nitems) memcpy(items, o->items, o->nitems * sizeof(order_item));
    o->items = items;
    bool *changed = AR_NEW(bool, o->nitems ? o->nitems : 1);
    for (size_t i = 0; i < n; i++) {
        long pos = first_item(o, ids[i]);
        if (pos < 0) return fail3(out, "Item ", ids[i], " not found");
        order_item *it = &o->items[pos];
        it->item_id = nids[i];
        it->price = last->price;
        it->options = last->options;
        changed[pos] = true;
    }
    o->status = S("pending (item modified)");

    add_payments(o, from);
    if (is_gift_card(m)) save_balance(pf.lu.u.user_id, m);
    for (size_t pos = 0; pos < o->nitems; pos++)
        if (changed[pos]) save_item(o, pos, &loaded[pos].options);
    save_order(o);
    w_order(out, o, false);
    return R_JSON;
}

/* exchange_delivered_order_items: requests an exchange of items of a
 * delivered order for available variants of the same products; the price
 * difference (rounded to cents) is settled with the payment method later.
 * Arguments: order_id, item_ids, new_item_ids, payment_method_id. Returns
 * the order (status "exchange requested"). */
int t_exchange_delivered_order_items(const jval *args, buf *out) {
    str oid = arg_str(args, "order_id"), pmid = arg_str(args, "payment_method_id");
    str *ids = NULL, *nids = NULL;
    size_t n = 0, nn = 0;
    arg_strlist(args, "item_ids", &ids, &n);
    arg_strlist(args, "new_item_ids", &nids, &nn);
    order *o;
    int rc = get_order(out, oid, &o);
    if (rc) return rc;
    if (!str_eqz(o->status, "delivered")) return tool_error(out, "Non-delivered order cannot be exchanged");
    const str *miss = missing_item(o, ids, n);
    if (miss) return fail3(out, "Number of ", *miss, " not found.");
    if (n != nn) return tool_error(out, "The number of items to be exchanged should match.");
    prefetched pf;
    if ((rc = prefetch(out, o, ids, nids, n, false, &pf))) return rc;
    double diff;
    variant *last;
    if ((rc = price_diff(out, o, &pf, ids, nids, n, false, &diff, &last))) return rc;
    diff = py_round2(diff);
    payment_method *m;
    if ((rc = method_of(out, &pf.lu, pmid, &m))) return rc;
    if (is_gift_card(m) && balance(m) < diff)
        return tool_error(out, "Insufficient gift card balance to pay for the price difference");
    o->status = S("exchange requested");
    o->exchange_items = sorted(ids, n);
    o->exchange_new_items = sorted(nids, nn);
    o->exchange_payment_method_id = (optstr){true, pmid};
    o->exchange_price_difference = (optnum){true, diff};
    save_order(o);
    w_order(out, o, false);
    return R_JSON;
}

/* address_arg reads the six address arguments. */
static address address_arg(const jval *args) {
    address a;
    a.address1 = arg_str(args, "address1");
    a.address2 = arg_str(args, "address2");
    a.city = arg_str(args, "city");
    a.country = arg_str(args, "country");
    a.state = arg_str(args, "state");
    a.zip = arg_str(args, "zip");
    return a;
}

/* modify_pending_order_address: the shipping address of an order whose
 * status contains "pending". Arguments: order_id, address1, address2, city,
 * state, country, zip. Returns the order. */
int t_modify_pending_order_address(const jval *args, buf *out) {
    order *o;
    int rc = get_order(out, arg_str(args, "order_id"), &o);
    if (rc) return rc;
    if (!str_contains(o->status, "pending")) return tool_error(out, "Non-pending order cannot be modified");
    o->address = address_arg(args);
    save_order(o);
    w_order(out, o, false);
    return R_JSON;
}

/* modify_pending_order_payment: the single payment of a pending order moves
 * to another of the user's payment methods (a payment plus a refund of the
 * old one; gift card balances change at once, rounded to cents).
 * Arguments: order_id, payment_method_id. Returns the order. */
int t_modify_pending_order_payment(const jval *args, buf *out) {
    str pmid = arg_str(args, "payment_method_id");
    order *o;
    int rc = get_order(out, arg_str(args, "order_id"), &o);
    if (rc) return rc;
    if (!str_contains(o->status, "pending")) return tool_error(out, "Non-pending order cannot be modified");
    lean_user lu;
    if ((rc = read_user(out, o->user_id, &lu))) return rc;
    payment_method *m;
    if ((rc = method_of(out, &lu, pmid, &m))) return rc;
    if (o->npayments != 1 || !str_eqz(o->payments[0].transaction_type, "payment"))
        return tool_error(out, "There should be exactly one payment for a pending order");
    payment first = o->payments[0];
    if (str_eq(first.payment_method_id, pmid))
        return tool_error(out, "The new payment method should be different from the current one");
    double amount = first.amount;
    if (is_gift_card(m) && balance(m) < amount)
        return tool_error(out, "Insufficient gift card balance to pay for the order");
    append_payment(o, "payment", amount, pmid);
    append_payment(o, "refund", amount, first.payment_method_id);
    payment_method *touched[2];
    size_t nt = 0;
    if (is_gift_card(m)) {
        set_balance(m, py_round2(balance(m) - amount));
        touched[nt++] = m;
    }
    payment_method *old;
    if ((rc = method_of(out, &lu, first.payment_method_id, &old))) return rc;
    if (is_gift_card(old)) {
        set_balance(old, py_round2(balance(old) + amount));
        touched[nt++] = old;
    }
    add_payments(o, 1);
    for (size_t i = 0; i < nt; i++) save_balance(lu.u.user_id, touched[i]);
    w_order(out, o, false);
    return R_JSON;
}

/* modify_user_address: a user's default address. Arguments: user_id,
 * address1, address2, city, state, country, zip. Returns the user. */
int t_modify_user_address(const jval *args, buf *out) {
    user *u;
    int rc = load_user(out, arg_str(args, "user_id"), &u);
    if (rc) return rc;
    if (!u) return tool_error(out, "User not found");
    u->address = address_arg(args);
    const address *d = &u->address;
    sqlv *a = AR_NEW(sqlv, 7);
    a[0] = SV_STR(d->address1);
    a[1] = SV_STR(d->address2);
    a[2] = SV_STR(d->city);
    a[3] = SV_STR(d->country);
    a[4] = SV_STR(d->state);
    a[5] = SV_STR(d->zip);
    a[6] = SV_STR(u->user_id);
    sql_queue("UPDATE users SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ? WHERE user_id = ?", 7, a);
    w_user(out, u);
    return R_JSON;
}

/* return_delivered_order_items: requests a return of items of a delivered
 * order, refunded to the original payment method or one of the user's gift
 * cards. Arguments: order_id, item_ids, payment_method_id. Returns the order
 * (status "return requested"). */
int t_return_delivered_order_items(const jval *args, buf *out) {
    str pmid = arg_str(args, "payment_method_id");
    str *ids = NULL;
    size_t n = 0;
    arg_strlist(args, "item_ids", &ids, &n);
    order *o;
    int rc = get_order(out, arg_str(args, "order_id"), &o);
    if (rc) return rc;
    if (!str_eqz(o->status, "delivered")) return tool_error(out, "Non-delivered order cannot be returned");
    lean_user lu;
    if ((rc = read_user(out, o->user_id, &lu))) return rc;
    payment_method *m;
    if ((rc = method_of(out, &lu, pmid, &m))) return rc;
    if (!is_gift_card(m)) {
        if (o->npayments == 0) return tool_error(out, "The order has no payment");
        if (!str_eq(pmid, o->payments[0].payment_method_id))
            return tool_error(out, "Payment method should be the original payment method");
    }
    if (missing_item(o, ids, n)) return tool_error(out, "Some item not found");
    o->status = S("return requested");
    o->return_items = sorted(ids, n);
    o->return_payment_method_id = (optstr){true, pmid};
    save_order(o);
    w_order(out, o, false);
    return R_JSON;
}
