/*
 * sql.c: SQL through weft_sql_v2 (docs/abi.md "weft_sql_v2", decision 035):
 * several statements in one host call, a compact binary request and
 * response. Results are decoded into the call's arena.
 */
#include "retail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEFT_IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))

WEFT_IMPORT("weft_sql_v2", "batch")
int32_t weft_sql_batch(const char *req, int32_t req_len, char *out, int32_t out_cap);

WEFT_IMPORT("weft_sql_v2", "take")
int32_t weft_sql_take(char *out, int32_t out_cap);

const char *cur_tool = "";

typedef struct {
    const char *sql;
    size_t nargs;
    const sqlv *args;
} stmt;

struct sqlbatch {
    stmt *s;
    size_t n, cap;
};

sqlbatch *sql_batch(void) { return AR_NEW(sqlbatch, 1); }

void sql_add(sqlbatch *b, const char *sql, size_t nargs, const sqlv *args) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        stmt *s = AR_NEW(stmt, cap);
        if (b->n) memcpy(s, b->s, b->n * sizeof *s);
        b->s = s;
        b->cap = cap;
    }
    b->s[b->n++] = (stmt){sql, nargs, args};
}

/* ---- encoding ------------------------------------------------------------- */

static buf reqbuf; /* reused between calls */

static void put_uvarint(buf *b, uint64_t v) {
    while (v >= 0x80) {
        buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    buf_putc(b, (char)v);
}

static void put_varint(buf *b, int64_t v) {
    uint64_t u = (uint64_t)v << 1;
    if (v < 0) u = ~u;
    put_uvarint(b, u);
}

static void put_str(buf *b, const char *p, size_t n) {
    put_uvarint(b, n);
    buf_putn(b, p, n);
}

static void put_value(buf *b, const sqlv *v) {
    switch (v->t) {
    case V_INT: buf_putc(b, 0x01); put_varint(b, v->i); break;
    case V_UINT: buf_putc(b, 0x02); put_uvarint(b, v->u); break;
    case V_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v->f, 8);
        char le[8];
        for (int i = 0; i < 8; i++) le[i] = (char)(bits >> (8 * i));
        buf_putc(b, 0x03);
        buf_putn(b, le, 8);
        break;
    }
    case V_BOOL: buf_putc(b, v->i ? 0x05 : 0x04); break;
    case V_STR: case V_JSON: buf_putc(b, 0x06); put_str(b, v->s.p, v->s.n); break;
    case V_BYTES: buf_putc(b, 0x07); put_str(b, v->s.p, v->s.n); break;
    case V_DECIMAL: buf_putc(b, 0x09); put_str(b, v->s.p, v->s.n); break;
    default: buf_putc(b, 0x00); break;
    }
}

/* ---- decoding ------------------------------------------------------------- */

typedef struct {
    const unsigned char *p, *end;
    bool bad;
} rd;

static uint64_t get_uvarint(rd *r) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) { r->bad = true; return 0; }
        unsigned c = *r->p++;
        v |= (uint64_t)(c & 0x7F) << shift;
        if (c < 0x80) return v;
    }
    r->bad = true;
    return 0;
}

static int64_t get_varint(rd *r) {
    uint64_t u = get_uvarint(r);
    int64_t v = (int64_t)(u >> 1);
    if (u & 1) v = ~v;
    return v;
}

static str get_str(rd *r) {
    uint64_t n = get_uvarint(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) { r->bad = true; return (str){"", 0}; }
    str s = {(const char *)r->p, (size_t)n};
    r->p += n;
    return s;
}

static void get_value(rd *r, sqlv *v) {
    if (r->p >= r->end) { r->bad = true; return; }
    unsigned tag = *r->p++;
    switch (tag) {
    case 0x00: v->t = V_NULL; break;
    case 0x01: v->t = V_INT; v->i = get_varint(r); break;
    case 0x02: v->t = V_UINT; v->u = get_uvarint(r); break;
    case 0x03: {
        if (r->end - r->p < 8) { r->bad = true; return; }
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits |= (uint64_t)r->p[i] << (8 * i);
        memcpy(&v->f, &bits, 8);
        r->p += 8;
        v->t = V_FLOAT;
        break;
    }
    case 0x04: case 0x05: v->t = V_BOOL; v->i = tag == 0x05; break;
    case 0x06: v->t = V_STR; v->s = get_str(r); break;
    case 0x07: v->t = V_BYTES; v->s = get_str(r); break;
    case 0x08: v->t = V_TIME; v->i = get_varint(r); v->ns = (uint32_t)get_uvarint(r); break;
    case 0x09: v->t = V_DECIMAL; v->s = get_str(r); break;
    case 0x0a: v->t = V_JSON; v->s = get_str(r); break;
    default: r->bad = true;
    }
}

/* ---- running -------------------------------------------------------------- */

#define RECV_CAP (64u << 10)
static char recvbuf[RECV_CAP];

static int fail(buf *out, const char *what, bool bug, const char *detail) {
    out->len = 0;
    if (bug) {
        buf_puts(out, "tool ");
        buf_puts(out, cur_tool);
        buf_puts(out, ": module bug: ");
    }
    buf_puts(out, "retail: ");
    buf_puts(out, what);
    buf_puts(out, ": weft sql: ");
    buf_puts(out, detail);
    return bug ? R_INTERNAL : R_TOOL_ERROR;
}

int sql_run(sqlbatch *b, const char *what, buf *out, sqlres **results) {
    reqbuf.len = 0;
    buf_putc(&reqbuf, 0x02);
    put_uvarint(&reqbuf, b->n);
    for (size_t i = 0; i < b->n; i++) {
        put_str(&reqbuf, b->s[i].sql, strlen(b->s[i].sql));
        put_uvarint(&reqbuf, b->s[i].nargs);
        for (size_t j = 0; j < b->s[i].nargs; j++) put_value(&reqbuf, &b->s[i].args[j]);
    }
    int32_t n = weft_sql_batch(reqbuf.p, (int32_t)reqbuf.len, recvbuf, (int32_t)RECV_CAP);
    char *resp;
    if (n <= (int32_t)RECV_CAP) {
        resp = ar_alloc((size_t)n + 1);
        memcpy(resp, recvbuf, (size_t)n);
    } else {
        resp = ar_alloc((size_t)n + 1);
        if (weft_sql_take(resp, n) != n) return fail(out, what, false, "malformed response: take failed");
    }
    rd r = {(const unsigned char *)resp, (const unsigned char *)resp + n, false};
    if (r.p >= r.end || *r.p != 0x02) return fail(out, what, false, "malformed response: bad version");
    r.p++;
    uint64_t count = get_uvarint(&r);
    if (r.bad || count > b->n) return fail(out, what, false, "malformed response: bad count");
    sqlres *res = AR_NEW(sqlres, b->n + 1);
    for (uint64_t i = 0; i < count; i++) {
        if (r.p >= r.end) { r.bad = true; break; }
        unsigned tag = *r.p++;
        if (tag == 0x01) {
            str kind = get_str(&r), msg = get_str(&r);
            if (r.bad) break;
            bool bug = str_eqz(kind, "syntax") || str_eqz(kind, "no_such_table") || str_eqz(kind, "no_such_column");
            buf d = {0};
            buf_puts(&d, "statement ");
            buf_put_i64(&d, (int64_t)i + 1);
            buf_puts(&d, ": sql ");
            buf_put_s(&d, kind);
            buf_puts(&d, ": ");
            buf_put_s(&d, msg);
            buf_putc(&d, 0);
            int rc = fail(out, what, bug, d.p);
            free(d.p);
            return rc;
        }
        if (tag != 0x00) { r.bad = true; break; }
        sqlres *x = &res[i];
        x->ncols = (size_t)get_uvarint(&r);
        if (r.bad || x->ncols > (size_t)(r.end - r.p)) { r.bad = true; break; }
        for (size_t c = 0; c < x->ncols; c++) {
            get_str(&r);
            if (r.p >= r.end) { r.bad = true; break; }
            r.p++; /* column type */
        }
        x->nrows = (size_t)get_uvarint(&r);
        if (r.bad) break;
        size_t cells = x->nrows * x->ncols;
        if (x->ncols && (cells / x->ncols != x->nrows || cells > (size_t)(r.end - r.p))) { r.bad = true; break; }
        x->cells = AR_NEW(sqlv, cells + 1);
        for (size_t k = 0; k < cells && !r.bad; k++) get_value(&r, &x->cells[k]);
        x->rows_affected = get_varint(&r);
        x->last_insert_id = get_uvarint(&r);
        if (r.bad) break;
    }
    if (r.bad) return fail(out, what, false, "malformed response: truncated result");
    if (count != b->n) {
        char d[96];
        snprintf(d, sizeof d, "malformed response: %u results for %u statements", (unsigned)count, (unsigned)b->n);
        return fail(out, what, false, d);
    }
    *results = res;
    return 0;
}

/* ---- queued writes ---------------------------------------------------------- */

static sqlbatch *queued;

void sql_queue(const char *sql, size_t nargs, const sqlv *args) {
    if (!queued) queued = sql_batch();
    sql_add(queued, sql, nargs, args);
}

/* sql_reset forgets the queue (main.c, at the start of each call: the queue
 * lives in the arena). */
void sql_reset(void) { queued = NULL; }

/* sql_flush sends the queued writes in one batch (main.c, after a write tool
 * succeeded); 0 or the error code with the message in *out. */
int sql_flush(buf *out) {
    if (!queued || queued->n == 0) return 0;
    sqlres *res;
    int rc = sql_run(queued, "exec", out, &res);
    queued = NULL;
    return rc;
}
