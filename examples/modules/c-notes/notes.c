/*
 * c-notes: a weft tool module (ABI v1, docs/abi.md) written in plain C.
 *
 * Tools:
 *   add_note    {text: string}  -> {"id": n}
 *   get_note    {id: integer}   -> {"id": n, "text": "..."} or tool error "no note N"
 *   count_notes {}              -> {"count": n}
 *
 * State lives in the table `notes` (schema.sql), reached through the
 * weft_sql_v1 host library. The module keeps no data between calls.
 *
 * Build: see Makefile (clang --target=wasm32-wasi -mexec-model=reactor).
 * Only libc's malloc/realloc/free and memcpy/memcmp/memset/strlen are used,
 * so the only WASI imports wasi-libc pulls in are the ones its start-up and
 * allocator need (none on wasi-libc as of Debian 12).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WEFT_IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
#define WEFT_EXPORT(name) __attribute__((export_name(name), used))

/* ---- host library weft_sql_v1 (result-buffer protocol) ---- */

WEFT_IMPORT("weft_sql_v1", "query")
int32_t weft_sql_query(const char *req, int32_t req_len, char *out, int32_t out_cap);

WEFT_IMPORT("weft_sql_v1", "take")
int32_t weft_sql_take(char *out, int32_t out_cap);

/* First-try size of the SQL result buffer. Results that do not fit are
 * fetched with take() into a heap buffer of the announced size. Override with
 * -DSQL_BUF_INITIAL=n (a tiny value exercises the take path on every query). */
#ifndef SQL_BUF_INITIAL
#define SQL_BUF_INITIAL 512
#endif

/* ---- growable byte buffer ---- */

typedef struct {
    char *p;
    size_t len, cap;
} buf;

static void buf_reserve(buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) __builtin_trap(); /* out of memory: the host discards the instance */
    b->p = p;
    b->cap = cap;
}

static void buf_putn(buf *b, const char *s, size_t n) {
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_puts(buf *b, const char *s) { buf_putn(b, s, strlen(s)); }

static void buf_putc(buf *b, char c) {
    buf_reserve(b, 1);
    b->p[b->len++] = c;
}

static void buf_free(buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static void buf_put_i64(buf *b, int64_t v) {
    char tmp[24];
    int i = sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    buf_putn(b, tmp + i, sizeof tmp - i);
}

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
    return len;
}

/* Appends s[0..n) as a JSON string literal. Control characters are escaped;
 * invalid UTF-8 becomes U+FFFD (as Go's encoding/json does). */
static void buf_put_jstr(buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    buf_putc(b, '"');
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            size_t j = i; /* copy a run of plain ASCII at once */
            while (j < n && u[j] >= 0x20 && u[j] < 0x80 && u[j] != '"' && u[j] != '\\') j++;
            buf_putn(b, s + i, j - i);
            i = j;
            continue;
        }
        switch (c) {
        case '"': buf_puts(b, "\\\""); i++; continue;
        case '\\': buf_puts(b, "\\\\"); i++; continue;
        case '\b': buf_puts(b, "\\b"); i++; continue;
        case '\f': buf_puts(b, "\\f"); i++; continue;
        case '\n': buf_puts(b, "\\n"); i++; continue;
        case '\r': buf_puts(b, "\\r"); i++; continue;
        case '\t': buf_puts(b, "\\t"); i++; continue;
        }
        if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            buf_putn(b, e, 6);
            i++;
            continue;
        }
        size_t l = utf8_seq(u + i, n - i);
        if (l == 0) {
            buf_puts(b, "\\ufffd");
            i++;
        } else {
            buf_putn(b, s + i, l);
            i += l;
        }
    }
    buf_putc(b, '"');
}

/* ---- a tiny JSON scanner ----
 * Enough for the request and the SQL response: walk objects key by key,
 * decode strings (all escapes, surrogate pairs), read integers, and skip
 * any value (so unknown fields are ignored, as the ABI requires). */

typedef struct {
    const char *p, *end;
} jscan;

#define JSON_MAX_DEPTH 64

static void j_ws(jscan *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

/* Skips whitespace and returns the next byte (not consumed), or -1 at the end. */
static int j_peek(jscan *j) {
    j_ws(j);
    return j->p < j->end ? (unsigned char)*j->p : -1;
}

static int j_eat(jscan *j, char c) {
    if (j_peek(j) != (unsigned char)c) return 0;
    j->p++;
    return 1;
}

static int j_lit(jscan *j, const char *lit) {
    size_t n = strlen(lit);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return 0;
    j->p += n;
    return 1;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int j_hex4(jscan *j, uint32_t *out) {
    if (j->end - j->p < 4) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)j->p[i]);
        if (h < 0) return 0;
        v = v << 4 | (uint32_t)h;
    }
    j->p += 4;
    *out = v;
    return 1;
}

static void put_utf8(buf *b, uint32_t cp) {
    char e[4];
    if (cp < 0x80) { buf_putc(b, (char)cp); return; }
    if (cp < 0x800) {
        e[0] = (char)(0xC0 | cp >> 6); e[1] = (char)(0x80 | (cp & 0x3F));
        buf_putn(b, e, 2);
    } else if (cp < 0x10000) {
        e[0] = (char)(0xE0 | cp >> 12); e[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        e[2] = (char)(0x80 | (cp & 0x3F));
        buf_putn(b, e, 3);
    } else {
        e[0] = (char)(0xF0 | cp >> 18); e[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        e[2] = (char)(0x80 | (cp >> 6 & 0x3F)); e[3] = (char)(0x80 | (cp & 0x3F));
        buf_putn(b, e, 4);
    }
}

/* Reads a JSON string. With out != NULL the decoded UTF-8 bytes are appended
 * to it (no terminating NUL); with out == NULL the string is only skipped.
 * A lone surrogate escape decodes to U+FFFD. */
static int j_string(jscan *j, buf *out) {
    if (!j_eat(j, '"')) return 0;
    for (;;) {
        const char *run = j->p;
        while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20) j->p++;
        if (out) buf_putn(out, run, (size_t)(j->p - run));
        if (j->p >= j->end || (unsigned char)*j->p < 0x20) return 0;
        if (*j->p++ == '"') return 1;
        if (j->p >= j->end) return 0;
        char c = *j->p++;
        char simple = 0;
        switch (c) {
        case '"': simple = '"'; break;
        case '\\': simple = '\\'; break;
        case '/': simple = '/'; break;
        case 'b': simple = '\b'; break;
        case 'f': simple = '\f'; break;
        case 'n': simple = '\n'; break;
        case 'r': simple = '\r'; break;
        case 't': simple = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!j_hex4(j, &cp)) return 0;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                const char *save = j->p;
                if (j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' && (j->p += 2, j_hex4(j, &lo)) &&
                    lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    j->p = save; /* lone high surrogate; what follows is read normally */
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            if (out) put_utf8(out, cp);
            continue;
        }
        default:
            return 0;
        }
        if (out) buf_putc(out, simple);
    }
}

/* Reads a JSON number token (validating its grammar); returns its span. */
static int j_number(jscan *j, const char **start, size_t *len) {
    j_ws(j);
    const char *p = j->p, *e = j->end, *s = p;
    if (p < e && *p == '-') p++;
    if (p >= e || *p < '0' || *p > '9') return 0;
    if (*p == '0') p++;
    else while (p < e && *p >= '0' && *p <= '9') p++;
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    j->p = p;
    *start = s;
    *len = (size_t)(p - s);
    return 1;
}

/* Converts a valid JSON number token to an int64. Returns 1 on success, 0 if
 * the number is not an integer or does not fit. JSON Schema's "integer"
 * accepts 3.0 and 3e2, so those are converted too (exactly, without floating
 * point: the significant digits are shifted by the exponent). */
static int num_to_i64(const char *s, size_t n, int64_t *out) {
    const char *e = s + n;
    int neg = s < e && *s == '-';
    if (neg) s++;
    char digits[24];
    size_t nd = 0;
    long shift = 0; /* value = digits * 10^shift */
    int nonzero_dropped = 0;
    for (; s < e && *s >= '0' && *s <= '9'; s++) {
        if (nd == 0 && *s == '0') continue; /* leading zeros */
        if (nd == sizeof digits) return 0;  /* far too large */
        digits[nd++] = *s;
    }
    if (s < e && *s == '.') {
        for (s++; s < e && *s >= '0' && *s <= '9'; s++) {
            if (nd == 0 && *s == '0') { shift--; continue; }
            if (nd == sizeof digits) { if (*s != '0') nonzero_dropped = 1; continue; }
            digits[nd++] = *s;
            shift--;
        }
    }
    if (nonzero_dropped) return 0;
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        int eneg = s < e && *s == '-';
        if (s < e && (*s == '+' || *s == '-')) s++;
        long x = 0;
        for (; s < e && *s >= '0' && *s <= '9'; s++)
            if (x < 100000) x = x * 10 + (*s - '0');
        shift += eneg ? -x : x;
    }
    if (nd == 0) { *out = 0; return 1; }
    while (shift < 0) { /* drop trailing zeros; any other digit is a fraction */
        if (digits[nd - 1] != '0') return 0;
        nd--;
        shift++;
    }
    if (shift > 19) return 0;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (size_t i = 0; i < nd + (size_t)shift; i++) {
        unsigned d = i < nd ? (unsigned)(digits[i] - '0') : 0;
        if (v > (lim - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

static int j_skip(jscan *j, int depth);

/* Object iteration: j_obj_begin, then j_obj_key until it returns 0.
 * j_obj_key returns 1 with the decoded key in *key (reset first) and the
 * scanner at the value, 0 at the closing brace, -1 on a syntax error. */
static int j_obj_begin(jscan *j) { return j_eat(j, '{'); }

static int j_obj_key(jscan *j, buf *key, int *first) {
    if (j_eat(j, '}')) return 0;
    if (!*first && !j_eat(j, ',')) return -1;
    *first = 0;
    key->len = 0;
    if (!j_string(j, key)) return -1;
    if (!j_eat(j, ':')) return -1;
    return 1;
}

static int j_arr_begin(jscan *j) { return j_eat(j, '['); }

/* Returns 1 when an element follows (scanner at it), 0 at ']', -1 on error. */
static int j_arr_next(jscan *j, int *first) {
    if (j_eat(j, ']')) return 0;
    if (!*first && !j_eat(j, ',')) return -1;
    *first = 0;
    return j_peek(j) < 0 ? -1 : 1;
}

static int j_skip(jscan *j, int depth) {
    if (depth > JSON_MAX_DEPTH) return 0;
    int c = j_peek(j);
    const char *s;
    size_t n;
    int first = 1, r;
    switch (c) {
    case '"': return j_string(j, NULL);
    case '{':
        j->p++;
        if (j_eat(j, '}')) return 1;
        for (;;) {
            if (!j_string(j, NULL) || !j_eat(j, ':') || !j_skip(j, depth + 1)) return 0;
            if (j_eat(j, '}')) return 1;
            if (!j_eat(j, ',')) return 0;
        }
    case '[':
        j->p++;
        while ((r = j_arr_next(j, &first)) == 1)
            if (!j_skip(j, depth + 1)) return 0;
        return r == 0;
    case 't': return j_lit(j, "true");
    case 'f': return j_lit(j, "false");
    case 'n': return j_lit(j, "null");
    default: return j_number(j, &s, &n);
    }
}

/* Reads an integer value: a JSON number, or a string holding one (how a
 * host might render a decimal/uint column). */
static int j_int(jscan *j, int64_t *out) {
    if (j_peek(j) == '"') {
        buf t = {0};
        int ok = j_string(j, &t);
        if (ok) {
            jscan k = {t.p, t.p + t.len};
            const char *s;
            size_t n;
            ok = t.len > 0 && j_number(&k, &s, &n) && k.p == k.end && num_to_i64(s, n, out);
        }
        buf_free(&t);
        return ok;
    }
    const char *s;
    size_t n;
    return j_number(j, &s, &n) && num_to_i64(s, n, out);
}

/* ---- per-call memory ----
 * weft_v1_alloc buffers stay valid until the next weft_v1_call returns; the
 * response stays valid until the host's next call into the instance. */

static void **g_allocs;
static size_t g_nallocs, g_capallocs;
static buf g_resp;

WEFT_EXPORT("weft_v1_alloc")
void *weft_v1_alloc(int32_t size) {
    if (size < 0) __builtin_trap();
    if (g_nallocs == g_capallocs) {
        size_t cap = g_capallocs ? g_capallocs * 2 : 8;
        void **a = realloc(g_allocs, cap * sizeof *a);
        if (!a) __builtin_trap();
        g_allocs = a;
        g_capallocs = cap;
    }
    void *p = malloc(size ? (size_t)size : 1);
    if (!p) __builtin_trap();
    g_allocs[g_nallocs++] = p;
    return p;
}

static uint64_t pack(const char *p, size_t n) {
    return (uint64_t)(uintptr_t)p << 32 | (uint32_t)n;
}

WEFT_EXPORT("weft_abi_v1")
void weft_abi_v1(void) {}

/* ---- manifest ---- */

static const char MANIFEST[] =
    "{\"abi\":\"weft/v1\",\"name\":\"c-notes\",\"version\":\"0.1.0\","
    "\"description\":\"Short text notes; a weft tool module written in C.\","
    "\"tools\":["
    "{\"name\":\"add_note\",\"description\":\"Store a note and return its id.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":200,"
    "\"description\":\"The note, at most 200 characters.\"}},\"required\":[\"text\"],\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}},"
    "{\"name\":\"get_note\",\"description\":\"Return the note with the given id.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"],"
    "\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"id\",\"text\"]},"
    "\"annotations\":{\"readOnlyHint\":true}},"
    "{\"name\":\"count_notes\",\"description\":\"Return how many notes are stored.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"count\":{\"type\":\"integer\"}},\"required\":[\"count\"]},"
    "\"annotations\":{\"readOnlyHint\":true}}"
    "],"
    "\"tables\":{\"owns\":[\"notes\"],\"reads\":[]},"
    "\"hosts\":{\"sql\":\"v1\"},"
    "\"export\":false}";

WEFT_EXPORT("weft_v1_manifest")
uint64_t weft_v1_manifest(void) {
    return pack(MANIFEST, sizeof MANIFEST - 1);
}

/* ---- SQL ---- */

typedef struct {
    int failed;            /* the response carried an error */
    buf err;               /* "kind: message" when failed */
    int64_t last_insert_id;
    int64_t rows_affected;
    size_t nrows;
    const char *row0;      /* span of the first row's JSON array, if any */
    const char *row0_end;
} sqlres;

static buf g_sqlbig; /* holds a result fetched with take(); reused */

/* Runs one statement. req is the request JSON. On a protocol or parse
 * failure returns 0 and sets *why; otherwise fills *r (whose spans point
 * into a buffer valid until the next sql_run). */
static int sql_run(const buf *req, sqlres *r, const char **why) {
    static char small[SQL_BUF_INITIAL];
    memset(r, 0, sizeof *r);
    int32_t n = weft_sql_query(req->p, (int32_t)req->len, small, (int32_t)sizeof small);
    const char *resp = small;
    if (n < 0) { *why = "sql: negative result length"; return 0; }
    if ((size_t)n > sizeof small) {
        g_sqlbig.len = 0;
        buf_reserve(&g_sqlbig, (size_t)n);
        int32_t m = weft_sql_take(g_sqlbig.p, n);
        if (m != n) { *why = "sql: take returned a different length"; return 0; }
        resp = g_sqlbig.p;
    }

    jscan j = {resp, resp + n};
    buf key = {0};
    int first = 1, k = 0, ok = 1;
    if (!j_obj_begin(&j)) ok = 0;
    while (ok && (k = j_obj_key(&j, &key, &first)) == 1) {
        if (key.len == 5 && memcmp(key.p, "error", 5) == 0) {
            if (j_peek(&j) == 'n') {
                ok = j_lit(&j, "null");
                continue;
            }
            /* {"kind": ..., "message": ...} */
            r->failed = 1;
            buf kind = {0}, msg = {0}, ek = {0};
            int f2 = 1, k2 = 0;
            if (!j_obj_begin(&j)) ok = 0;
            while (ok && (k2 = j_obj_key(&j, &ek, &f2)) == 1) {
                if (ek.len == 4 && memcmp(ek.p, "kind", 4) == 0 && j_peek(&j) == '"') ok = j_string(&j, &kind);
                else if (ek.len == 7 && memcmp(ek.p, "message", 7) == 0 && j_peek(&j) == '"') ok = j_string(&j, &msg);
                else ok = j_skip(&j, 1);
            }
            if (ok && k2 < 0) ok = 0;
            buf_putn(&r->err, kind.p ? kind.p : "other", kind.p ? kind.len : 5);
            buf_puts(&r->err, ": ");
            if (msg.p) buf_putn(&r->err, msg.p, msg.len);
            buf_free(&kind);
            buf_free(&msg);
            buf_free(&ek);
        } else if (key.len == 14 && memcmp(key.p, "last_insert_id", 14) == 0) {
            ok = j_int(&j, &r->last_insert_id);
        } else if (key.len == 13 && memcmp(key.p, "rows_affected", 13) == 0) {
            ok = j_int(&j, &r->rows_affected);
        } else if (key.len == 4 && memcmp(key.p, "rows", 4) == 0) {
            if (j_peek(&j) == 'n') { ok = j_lit(&j, "null"); continue; }
            int f2 = 1, k2 = 0;
            if (!j_arr_begin(&j)) ok = 0;
            while (ok && (k2 = j_arr_next(&j, &f2)) == 1) {
                const char *s = j.p;
                ok = j_skip(&j, 1);
                if (r->nrows++ == 0) { r->row0 = s; r->row0_end = j.p; }
            }
            if (ok && k2 < 0) ok = 0;
        } else {
            ok = j_skip(&j, 1);
        }
    }
    if (ok && k < 0) ok = 0;
    if (ok && j_peek(&j) != -1) ok = 0;
    buf_free(&key);
    if (!ok) { *why = "sql: malformed response"; return 0; }
    return 1;
}

/* Reads the cells of the first row: for each cell i < ncols, calls back. */
typedef int (*cell_fn)(int i, jscan *j, void *ctx);

static int row0_cells(const sqlres *r, int ncols, cell_fn fn, void *ctx) {
    if (!r->row0) return 0;
    jscan j = {r->row0, r->row0_end};
    int first = 1, k, i = 0;
    if (!j_arr_begin(&j)) return 0;
    while ((k = j_arr_next(&j, &first)) == 1) {
        if (i < ncols) {
            if (!fn(i, &j, ctx)) return 0;
        } else if (!j_skip(&j, 1)) {
            return 0;
        }
        i++;
    }
    return k == 0 && i >= ncols;
}

/* ---- responses ---- */

/* A successful result: structuredContent = obj, and the same JSON as text. */
static void respond_ok(const buf *obj) {
    buf_puts(&g_resp, "{\"content\":[{\"type\":\"text\",\"text\":");
    buf_put_jstr(&g_resp, obj->p, obj->len);
    buf_puts(&g_resp, "}],\"structuredContent\":");
    buf_putn(&g_resp, obj->p, obj->len);
    buf_puts(&g_resp, ",\"isError\":false}");
}

static void respond_tool_error(const buf *msg) {
    buf_puts(&g_resp, "{\"content\":[{\"type\":\"text\",\"text\":");
    buf_put_jstr(&g_resp, msg->p, msg->len);
    buf_puts(&g_resp, "}],\"isError\":true}");
}

static void respond_internal(const char *msg, const buf *detail) {
    buf m = {0};
    buf_puts(&m, msg);
    if (detail) {
        buf_puts(&m, ": ");
        buf_putn(&m, detail->p, detail->len);
    }
    g_resp.len = 0;
    buf_puts(&g_resp, "{\"internalError\":");
    buf_put_jstr(&g_resp, m.p, m.len);
    buf_putc(&g_resp, '}');
    buf_free(&m);
}

/* ---- arguments ---- */

/* Finds key in the arguments object and leaves *v at its value. */
static int arg_find(const char *args, const char *args_end, const char *name, jscan *v) {
    if (!args) return 0;
    jscan j = {args, args_end};
    buf key = {0};
    int first = 1, k, found = 0;
    size_t n = strlen(name);
    if (!j_obj_begin(&j)) return 0;
    while ((k = j_obj_key(&j, &key, &first)) == 1) {
        if (key.len == n && memcmp(key.p, name, n) == 0) {
            *v = j;
            found = 1;
            break;
        }
        if (!j_skip(&j, 1)) break;
    }
    buf_free(&key);
    return found;
}

/* ---- tools ---- */

static void tool_add_note(const char *args, const char *args_end) {
    jscan v;
    buf text = {0}, req = {0}, out = {0};
    sqlres r = {0};
    const char *why;
    if (!arg_find(args, args_end, "text", &v) || !j_string(&v, &text)) {
        respond_internal("add_note: argument text missing or not a string", NULL);
        goto done;
    }
    buf_puts(&req, "{\"sql\":\"INSERT INTO notes (text) VALUES (?)\",\"args\":[");
    buf_put_jstr(&req, text.p, text.len);
    buf_puts(&req, "]}");
    if (!sql_run(&req, &r, &why)) { respond_internal(why, NULL); goto done; }
    if (r.failed) { respond_internal("add_note: sql", &r.err); goto done; }
    if (r.last_insert_id <= 0) { respond_internal("add_note: no last_insert_id", NULL); goto done; }
    buf_puts(&out, "{\"id\":");
    buf_put_i64(&out, r.last_insert_id);
    buf_putc(&out, '}');
    respond_ok(&out);
done:
    buf_free(&text);
    buf_free(&req);
    buf_free(&out);
    buf_free(&r.err);
}

struct note_row {
    int64_t id;
    buf text;
};

static int note_cell(int i, jscan *j, void *ctx) {
    struct note_row *n = ctx;
    if (i == 0) return j_int(j, &n->id);
    return j_string(j, &n->text);
}

static void tool_get_note(const char *args, const char *args_end) {
    jscan v;
    buf req = {0}, out = {0}, msg = {0};
    sqlres r = {0};
    struct note_row row = {0};
    const char *why, *tok;
    size_t toklen;
    int64_t id;
    if (!arg_find(args, args_end, "id", &v) || !j_number(&v, &tok, &toklen)) {
        respond_internal("get_note: argument id missing or not a number", NULL);
        goto done;
    }
    if (!num_to_i64(tok, toklen, &id)) {
        /* an integer beyond int64 cannot be the id of a note */
        buf_puts(&msg, "no note ");
        buf_putn(&msg, tok, toklen);
        respond_tool_error(&msg);
        goto done;
    }
    buf_puts(&req, "{\"sql\":\"SELECT id, text FROM notes WHERE id = ?\",\"args\":[");
    buf_put_i64(&req, id);
    buf_puts(&req, "]}");
    if (!sql_run(&req, &r, &why)) { respond_internal(why, NULL); goto done; }
    if (r.failed) { respond_internal("get_note: sql", &r.err); goto done; }
    if (r.nrows == 0) {
        buf_puts(&msg, "no note ");
        buf_put_i64(&msg, id);
        respond_tool_error(&msg);
        goto done;
    }
    if (!row0_cells(&r, 2, note_cell, &row)) { respond_internal("get_note: unexpected row shape", NULL); goto done; }
    buf_puts(&out, "{\"id\":");
    buf_put_i64(&out, row.id);
    buf_puts(&out, ",\"text\":");
    buf_put_jstr(&out, row.text.p ? row.text.p : "", row.text.len);
    buf_putc(&out, '}');
    respond_ok(&out);
done:
    buf_free(&req);
    buf_free(&out);
    buf_free(&msg);
    buf_free(&row.text);
    buf_free(&r.err);
}

static int count_cell(int i, jscan *j, void *ctx) {
    (void)i;
    return j_int(j, ctx);
}

static void tool_count_notes(void) {
    static const buf req = {
        (char *)"{\"sql\":\"SELECT COUNT(*) FROM notes\",\"args\":[]}",
        sizeof "{\"sql\":\"SELECT COUNT(*) FROM notes\",\"args\":[]}" - 1, 0};
    buf out = {0};
    sqlres r = {0};
    const char *why;
    int64_t count;
    if (!sql_run(&req, &r, &why)) { respond_internal(why, NULL); goto done; }
    if (r.failed) { respond_internal("count_notes: sql", &r.err); goto done; }
    if (r.nrows != 1 || !row0_cells(&r, 1, count_cell, &count)) {
        respond_internal("count_notes: unexpected result shape", NULL);
        goto done;
    }
    buf_puts(&out, "{\"count\":");
    buf_put_i64(&out, count);
    buf_putc(&out, '}');
    respond_ok(&out);
done:
    buf_free(&out);
    buf_free(&r.err);
}

/* ---- entry point ---- */

WEFT_EXPORT("weft_v1_call")
uint64_t weft_v1_call(const char *ptr, int32_t len) {
    g_resp.len = 0;
    if (g_resp.cap > (1u << 20)) buf_free(&g_resp); /* don't hold on to a huge response */
    if (g_sqlbig.cap > (1u << 20)) buf_free(&g_sqlbig);

    jscan j = {ptr, ptr + (len > 0 ? len : 0)};
    buf key = {0}, tool = {0};
    const char *args = NULL, *args_end = NULL;
    int first = 1, k = -1, ok = 1, have_tool = 0;
    if (!j_obj_begin(&j)) ok = 0;
    while (ok && (k = j_obj_key(&j, &key, &first)) == 1) {
        if (key.len == 4 && memcmp(key.p, "tool", 4) == 0 && j_peek(&j) == '"') {
            tool.len = 0;
            ok = j_string(&j, &tool);
            have_tool = ok;
        } else if (key.len == 9 && memcmp(key.p, "arguments", 9) == 0 && j_peek(&j) == '{') {
            args = j.p;
            ok = j_skip(&j, 0);
            args_end = j.p;
        } else {
            ok = j_skip(&j, 0);
        }
    }
    if (ok && k < 0) ok = 0;
    if (ok && j_peek(&j) != -1) ok = 0;

    if (!ok || !have_tool) {
        respond_internal("malformed request", NULL);
    } else if (tool.len == 8 && memcmp(tool.p, "add_note", 8) == 0) {
        tool_add_note(args, args_end);
    } else if (tool.len == 8 && memcmp(tool.p, "get_note", 8) == 0) {
        tool_get_note(args, args_end);
    } else if (tool.len == 11 && memcmp(tool.p, "count_notes", 11) == 0) {
        tool_count_notes();
    } else {
        respond_internal("unknown tool", &tool);
    }
    buf_free(&key);
    buf_free(&tool);

    /* the request buffers (weft_v1_alloc) are released when the call returns */
    for (size_t i = 0; i < g_nallocs; i++) free(g_allocs[i]);
    g_nallocs = 0;
    return pack(g_resp.p, g_resp.len);
}
