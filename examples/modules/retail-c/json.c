/*
 * json.c: the arena, strings, buffers, a JSON parser (call arguments, JSON
 * columns) and the JSON writer. The writer prints exactly what the Go module
 * prints: strings as Go's encoding/json writes them, floats as Python's repr.
 */
#include "retail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------------- */

typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
    _Alignas(8) unsigned char data[];
} chunk;

static chunk *arena_head;  /* current chunk */
static chunk *arena_first; /* the first chunk, kept between calls */

#define CHUNK_MIN (256u << 10)

void *ar_alloc(size_t n) {
    n = (n + 7) & ~(size_t)7;
    if (!arena_head || arena_head->used + n > arena_head->cap) {
        size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
        chunk *c = malloc(sizeof(chunk) + cap);
        if (!c) __builtin_trap();
        c->next = NULL;
        c->cap = cap;
        c->used = 0;
        if (arena_head) arena_head->next = c;
        else arena_first = c;
        arena_head = c;
    }
    void *p = arena_head->data + arena_head->used;
    arena_head->used += n;
    memset(p, 0, n);
    return p;
}

/* ar_reset frees every chunk but the first and empties it (main.c, at the
 * start of each call). */
void ar_reset(void) {
    if (!arena_first) return;
    chunk *c = arena_first->next;
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    arena_first->next = NULL;
    arena_first->used = 0;
    arena_head = arena_first;
}

/* ---- strings and buffers -------------------------------------------------- */

bool str_eq(str a, str b) { return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0); }

bool str_eqz(str a, const char *z) {
    size_t n = strlen(z);
    return a.n == n && (n == 0 || memcmp(a.p, z, n) == 0);
}

str str_dup(str s) {
    char *p = ar_alloc(s.n + 1);
    if (s.n) memcpy(p, s.p, s.n);
    return (str){p, s.n};
}

static void buf_reserve(buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) __builtin_trap();
    b->p = p;
    b->cap = cap;
}

void buf_putn(buf *b, const char *s, size_t n) {
    if (!n) return;
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void buf_puts(buf *b, const char *z) { buf_putn(b, z, strlen(z)); }

void buf_putc(buf *b, char c) {
    buf_reserve(b, 1);
    b->p[b->len++] = c;
}

void buf_put_s(buf *b, str s) { buf_putn(b, s.p, s.n); }

void buf_put_i64(buf *b, int64_t v) {
    char tmp[24];
    int i = sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    buf_putn(b, tmp + i, sizeof tmp - (size_t)i);
}

str buf_str(const buf *b) { return (str){b->p, b->len}; }

/* ---- UTF-8 (Go's unicode/utf8.DecodeRune rules) ---------------------------- */

/* utf8_decode decodes the rune at p (n > 0 bytes); returns it and sets *size,
 * or returns -1 with *size 1 for an invalid or incomplete sequence. */
static int32_t utf8_decode(const unsigned char *p, size_t n, size_t *size) {
    unsigned c = p[0];
    *size = 1;
    if (c < 0x80) return (int32_t)c;
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    int32_t r;
    if (c >= 0xC2 && c <= 0xDF) { need = 2; r = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3; r = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4; r = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return -1;
    if (n < need) return -1;
    if (p[1] < lo || p[1] > hi) return -1;
    r = (r << 6) | (p[1] & 0x3F);
    for (size_t i = 2; i < need; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF) return -1;
        r = (r << 6) | (p[i] & 0x3F);
    }
    *size = need;
    return r;
}

static size_t utf8_encode(char *dst, int32_t r) {
    if (r < 0x80) { dst[0] = (char)r; return 1; }
    if (r < 0x800) {
        dst[0] = (char)(0xC0 | (r >> 6));
        dst[1] = (char)(0x80 | (r & 0x3F));
        return 2;
    }
    if (r < 0x10000) {
        dst[0] = (char)(0xE0 | (r >> 12));
        dst[1] = (char)(0x80 | ((r >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (r & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (r >> 18));
    dst[1] = (char)(0x80 | ((r >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((r >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (r & 0x3F));
    return 4;
}

/* ---- JSON parser ---------------------------------------------------------- */

typedef struct {
    const unsigned char *p, *end;
    const char *err;
} parser;

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static int hex4(const unsigned char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (int)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (int)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (int)(c - 'A' + 10);
        else return -1;
    }
    return v;
}

/* parse_string: at the opening quote; decodes as Go's encoding/json does. */
static bool parse_string(parser *ps, str *out) {
    const unsigned char *p = ps->p + 1, *end = ps->end;
    /* fast path: printable ASCII without escapes */
    const unsigned char *q = p;
    while (q < end && *q != '"' && *q != '\\' && *q >= 0x20 && *q < 0x80) q++;
    if (q < end && *q == '"') {
        *out = (str){(const char *)p, (size_t)(q - p)};
        ps->p = q + 1;
        return true;
    }
    /* slow path: decode into the arena (at most 3 bytes per input byte: an
     * invalid byte becomes U+FFFD) */
    size_t cap = 0;
    const unsigned char *e = p;
    while (e < end && *e != '"') {
        if (*e == '\\') e++;
        e++;
    }
    if (e >= end) { ps->err = "unterminated string"; return false; }
    cap = (size_t)(e - p) * 3 + 4;
    char *dst = ar_alloc(cap);
    size_t n = 0;
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *out = (str){dst, n};
            ps->p = p + 1;
            return true;
        }
        if (c < 0x20) { ps->err = "control character in string"; return false; }
        if (c == '\\') {
            if (p + 1 >= end) break;
            unsigned esc = p[1];
            p += 2;
            switch (esc) {
            case '"': dst[n++] = '"'; break;
            case '\\': dst[n++] = '\\'; break;
            case '/': dst[n++] = '/'; break;
            case 'b': dst[n++] = '\b'; break;
            case 'f': dst[n++] = '\f'; break;
            case 'n': dst[n++] = '\n'; break;
            case 'r': dst[n++] = '\r'; break;
            case 't': dst[n++] = '\t'; break;
            case 'u': {
                if (end - p < 4) { ps->err = "bad \\u escape"; return false; }
                int r = hex4(p);
                if (r < 0) { ps->err = "bad \\u escape"; return false; }
                p += 4;
                if (r >= 0xD800 && r < 0xE000) {
                    int r2 = -1;
                    if (r < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                        r2 = hex4(p + 2);
                    }
                    if (r2 >= 0xDC00 && r2 < 0xE000) {
                        r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                        p += 6;
                    } else {
                        if (r2 < 0 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2) < 0) {
                            ps->err = "bad \\u escape";
                            return false;
                        }
                        r = 0xFFFD;
                    }
                }
                n += utf8_encode(dst + n, r);
                break;
            }
            default: ps->err = "bad escape"; return false;
            }
            continue;
        }
        if (c < 0x80) { dst[n++] = (char)c; p++; continue; }
        size_t size;
        int32_t r = utf8_decode(p, (size_t)(end - p), &size);
        if (r < 0) {
            n += utf8_encode(dst + n, 0xFFFD);
            p++;
        } else {
            memcpy(dst + n, p, size);
            n += size;
            p += size;
        }
    }
    ps->err = "unterminated string";
    return false;
}

static bool parse_number(parser *ps, jval *v) {
    const unsigned char *p = ps->p, *end = ps->end, *start = p;
    if (p < end && *p == '-') p++;
    if (p >= end) goto bad;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (p < end && *p >= '0' && *p <= '9') p++;
    else goto bad;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') goto bad;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') goto bad;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    v->t = J_NUM;
    v->s = (str){(const char *)start, (size_t)(p - start)};
    ps->p = p;
    return true;
bad:
    ps->err = "invalid number";
    return false;
}

static bool lit(parser *ps, const char *w, size_t n) {
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0) {
        ps->err = "invalid literal";
        return false;
    }
    ps->p += n;
    return true;
}

/* Elements of arrays and objects are first collected in a growable scratch
 * list (arena), then copied into an exact array. */
static bool parse_value(parser *ps, jval *v, int depth);

static bool parse_container(parser *ps, jval *v, int depth, bool obj) {
    if (depth >= JSON_MAX_DEPTH) { ps->err = "nesting too deep"; return false; }
    ps->p++;
    size_t cap = 4, n = 0;
    jval *items = AR_NEW(jval, cap);
    str *keys = obj ? AR_NEW(str, cap) : NULL;
    skip_ws(ps);
    char close = obj ? '}' : ']';
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        goto done;
    }
    for (;;) {
        if (n == cap) {
            jval *ni = AR_NEW(jval, cap * 2);
            memcpy(ni, items, cap * sizeof *ni);
            items = ni;
            if (obj) {
                str *nk = AR_NEW(str, cap * 2);
                memcpy(nk, keys, cap * sizeof *nk);
                keys = nk;
            }
            cap *= 2;
        }
        skip_ws(ps);
        if (obj) {
            if (ps->p >= ps->end || *ps->p != '"') { ps->err = "want a member name"; return false; }
            if (!parse_string(ps, &keys[n])) return false;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') { ps->err = "want ':'"; return false; }
            ps->p++;
            skip_ws(ps);
        }
        if (!parse_value(ps, &items[n], depth + 1)) return false;
        n++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
        ps->err = obj ? "want ',' or '}'" : "want ',' or ']'";
        return false;
    }
done:
    v->t = obj ? J_OBJ : J_ARR;
    v->n = n;
    v->items = items;
    v->keys = keys;
    return true;
}

static bool parse_value(parser *ps, jval *v, int depth) {
    skip_ws(ps);
    if (ps->p >= ps->end) { ps->err = "unexpected end of JSON input"; return false; }
    switch (*ps->p) {
    case '{': return parse_container(ps, v, depth, true);
    case '[': return parse_container(ps, v, depth, false);
    case '"': v->t = J_STR; return parse_string(ps, &v->s);
    case 't': v->t = J_TRUE; return lit(ps, "true", 4);
    case 'f': v->t = J_FALSE; return lit(ps, "false", 5);
    case 'n': v->t = J_NULL; return lit(ps, "null", 4);
    default: return parse_number(ps, v);
    }
}

const jval *json_parse(str text, const char **err) {
    parser ps = {(const unsigned char *)text.p, (const unsigned char *)text.p + text.n, NULL};
    jval *v = AR_NEW(jval, 1);
    if (!parse_value(&ps, v, 0)) {
        if (err) *err = ps.err;
        return NULL;
    }
    skip_ws(&ps);
    if (ps.p != ps.end) {
        if (err) *err = "invalid character after top-level value";
        return NULL;
    }
    return v;
}

const jval *json_get(const jval *v, const char *key) {
    if (!v || v->t != J_OBJ) return NULL;
    for (size_t i = v->n; i-- > 0;) {
        if (str_eqz(v->keys[i], key)) return &v->items[i];
    }
    return NULL;
}

str arg_str(const jval *args, const char *key) {
    const jval *v = json_get(args, key);
    if (!v || v->t != J_STR) return (str){"", 0};
    return v->s;
}

bool arg_strlist(const jval *args, const char *key, str **v, size_t *n) {
    const jval *a = json_get(args, key);
    *v = NULL;
    *n = 0;
    if (!a || a->t != J_ARR) return false;
    str *out = AR_NEW(str, a->n + 1);
    for (size_t i = 0; i < a->n; i++) out[i] = a->items[i].t == J_STR ? a->items[i].s : (str){"", 0};
    *v = out;
    *n = a->n;
    return true;
}

/* ---- writer --------------------------------------------------------------- */

static const char hexd[] = "0123456789abcdef";

/* json_escape writes s quoted as Go's encoding/json does; html: also escape
 * < > & (json.Marshal) or not (an Encoder with SetEscapeHTML(false)). */
void json_escape(buf *b, str s, bool html) {
    const unsigned char *p = (const unsigned char *)s.p;
    size_t n = s.n, start = 0, i = 0;
    buf_reserve(b, n + 2);
    buf_putc(b, '"');
    while (i < n) {
        unsigned c = p[i];
        if (c < 0x80) {
            if (c >= 0x20 && c != '"' && c != '\\' && (!html || (c != '<' && c != '>' && c != '&'))) {
                i++;
                continue;
            }
            buf_putn(b, (const char *)p + start, i - start);
            char e[6] = {'\\', 0};
            switch (c) {
            case '"': case '\\': e[1] = (char)c; buf_putn(b, e, 2); break;
            case '\b': buf_putn(b, "\\b", 2); break;
            case '\f': buf_putn(b, "\\f", 2); break;
            case '\n': buf_putn(b, "\\n", 2); break;
            case '\r': buf_putn(b, "\\r", 2); break;
            case '\t': buf_putn(b, "\\t", 2); break;
            default:
                e[1] = 'u'; e[2] = '0'; e[3] = '0'; e[4] = hexd[c >> 4]; e[5] = hexd[c & 15];
                buf_putn(b, e, 6);
            }
            i++;
            start = i;
            continue;
        }
        size_t size;
        int32_t r = utf8_decode(p + i, n - i, &size);
        if (r < 0) {
            buf_putn(b, (const char *)p + start, i - start);
            buf_putn(b, "\\ufffd", 6);
            i += size;
            start = i;
            continue;
        }
        if (r == 0x2028 || r == 0x2029) {
            buf_putn(b, (const char *)p + start, i - start);
            buf_putn(b, r == 0x2028 ? "\\u2028" : "\\u2029", 6);
            i += size;
            start = i;
            continue;
        }
        i += size;
    }
    buf_putn(b, (const char *)p + start, n - start);
    buf_putc(b, '"');
}

void w_str(buf *b, str s) { json_escape(b, s, true); }

void w_strlist(buf *b, const str *v, size_t n) {
    buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) buf_putc(b, ',');
        w_str(b, v[i]);
    }
    buf_putc(b, ']');
}

str json_strlist(const str *v, size_t n) {
    buf t = {0};
    w_strlist(&t, v, n);
    str s = str_dup(buf_str(&t));
    free(t.p);
    return s;
}

/* shortest_digits sets digits (no dot, no trailing zeros, at least one) and
 * the decimal exponent of x's first digit, for finite nonzero |x|: the
 * shortest decimal that reads back as x, correctly rounded (Go's
 * strconv.FormatFloat(x, 'e', -1, 64)). A decimal of at most 15 significant
 * digits is recovered from x by rounding to 15 digits (10^15 < 2^53), so
 * %.14e is tried first, then 16 and 17 digits. */
static int shortest_digits(double x, char *digits, int *exp10) {
    char tmp[40];
    for (int prec = 14; prec <= 16; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec, x);
        if (prec == 16 || strtod(tmp, NULL) == x) break;
    }
    /* tmp: d.ddddde[+-]XX */
    int n = 0;
    char *p = tmp;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[n++] = *p;
    *exp10 = atoi(p + 1);
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = 0;
    return n;
}

size_t py_repr(char *dst, double x) {
    if (x != x) { strcpy(dst, "nan"); return 3; }
    if (x > 1.7976931348623157e308) { strcpy(dst, "inf"); return 3; }
    if (x < -1.7976931348623157e308) { strcpy(dst, "-inf"); return 4; }
    char *o = dst;
    if (__builtin_signbit(x)) { *o++ = '-'; x = -x; }
    if (x == 0) { strcpy(o, "0.0"); return (size_t)(o - dst) + 3; }
    char d[24];
    int e;
    int n = shortest_digits(x, d, &e);
    if (e < -4 || e >= 16) {
        *o++ = d[0];
        if (n > 1) {
            *o++ = '.';
            memcpy(o, d + 1, (size_t)n - 1);
            o += n - 1;
        }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae >= 100) { *o++ = (char)('0' + ae / 100); ae %= 100; *o++ = (char)('0' + ae / 10); *o++ = (char)('0' + ae % 10); }
        else { *o++ = (char)('0' + ae / 10); *o++ = (char)('0' + ae % 10); }
    } else if (e < 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e - 1; i++) *o++ = '0';
        memcpy(o, d, (size_t)n);
        o += n;
    } else {
        int intd = e + 1; /* digits before the point */
        for (int i = 0; i < intd; i++) *o++ = i < n ? d[i] : '0';
        *o++ = '.';
        if (n > intd) {
            memcpy(o, d + intd, (size_t)(n - intd));
            o += n - intd;
        } else *o++ = '0';
    }
    *o = 0;
    return (size_t)(o - dst);
}

void w_pyfloat(buf *b, double x) {
    char tmp[40];
    size_t n = py_repr(tmp, x);
    buf_putn(b, tmp, n);
}

double py_round2(double x) {
    if (x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308) return x;
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%.2f", x);
    return strtod(tmp, NULL);
}
