/*
 * retail-c: the tau2 retail domain as a weft tool module in C (ABI v1,
 * docs/abi.md), output byte for byte the Go module's
 * (examples/modules/retail). This header is shared by every .c file of the
 * module: memory, strings, JSON arguments, the JSON writer, SQL (one
 * weft_sql_v2 batch per host crossing), the retail records and how a tool
 * reports its result.
 *
 * Memory: everything a call allocates comes from a per-call arena
 * (ar_alloc), released when the next call starts. No call keeps data for the
 * next one (the module keeps no session state, docs/abi.md "Lifecycle").
 */
#ifndef RETAIL_H
#define RETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- arena ---------------------------------------------------------------- */

/* ar_alloc returns n zeroed bytes, 8-aligned, valid until the call ends.
 * Out of memory traps (the host classifies it memory_limit). */
void *ar_alloc(size_t n);
#define AR_NEW(T, n) ((T *)ar_alloc(sizeof(T) * (size_t)(n)))

/* ---- strings -------------------------------------------------------------- */

/* str is a byte string (UTF-8), not NUL-terminated; p may be NULL when n is 0. */
typedef struct {
    const char *p;
    size_t n;
} str;

#define S(lit) ((str){(lit), sizeof(lit) - 1})
bool str_eq(str a, str b);
bool str_eqz(str a, const char *z); /* a equals the C string z */
str str_dup(str s);                   /* copy into the arena */

/* ---- growable byte buffer (the JSON writer writes into one) ---------------- */

typedef struct {
    char *p;
    size_t len, cap;
} buf;

void buf_putn(buf *b, const char *s, size_t n);
void buf_puts(buf *b, const char *z);
void buf_putc(buf *b, char c);
void buf_put_s(buf *b, str s); /* raw bytes, no quoting */
void buf_put_i64(buf *b, int64_t v);
str buf_str(const buf *b);     /* view of the content (not copied) */

/* ---- JSON values (call arguments, JSON columns) ----------------------------- */

typedef enum { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval jval;
struct jval {
    jtype t;
    str s;        /* J_STR: the decoded string as Go's encoding/json decodes it
                     (escapes resolved, invalid UTF-8 and lone surrogates as
                     U+FFFD); J_NUM: the number's text as written */
    size_t n;     /* J_ARR, J_OBJ: number of elements / members */
    jval *items;  /* J_ARR: elements; J_OBJ: member values */
    str *keys;    /* J_OBJ: member names (decoded), parallel to items */
};

/* json_parse parses one JSON value (RFC 8259, whitespace around it allowed,
 * nothing after it) into the arena. Returns NULL on invalid JSON or nesting
 * deeper than JSON_MAX_DEPTH; *err (if not NULL) gets a short reason. */
#define JSON_MAX_DEPTH 1000
const jval *json_parse(str text, const char **err);

/* json_get is the member key of object v (the last one when repeated, as
 * encoding/json keeps the last), or NULL (v not an object or no such key). */
const jval *json_get(const jval *v, const char *key);

/* ---- tool arguments --------------------------------------------------------
 * The host validated the arguments against the tool's input schema before the
 * call (every schema of this module is an object of required string or
 * string-array properties, additionalProperties false), so the getters below
 * only see well-typed values. Still, like encoding/json decoding into a Go
 * struct: an absent key or a JSON null is the zero value ("" / a NULL list of
 * length 0). main.c checks the argument types (and unknown keys) before the
 * tool runs and answers the tool error "invalid arguments: ..." itself, so a
 * tool function never sees a value of the wrong type.
 */
str arg_str(const jval *args, const char *key);
/* arg_strlist sets *v, *n to the array's strings (arena); returns false when
 * the key is absent or null (Go: a nil slice), true for an array (maybe empty). */
bool arg_strlist(const jval *args, const char *key, str **v, size_t *n);

/* ---- result of a tool --------------------------------------------------------
 * A tool function writes into *out and returns one of these; main.c wraps it
 * into the MCP CallToolResult exactly as sdk/tool does:
 *   R_JSON   out is a JSON object (a record): the text content is that JSON and
 *            structuredContent the same bytes (a Go tool returning a struct);
 *   R_TEXT   out is plain text: one text content (a Go tool returning a string);
 *   R_TOOL_ERROR  out is the message: text content + "isError": true
 *            (the Go tool returned an error; its writes are rolled back);
 *   R_INTERNAL    out is the message: {"internalError": "..."} (a module bug;
 *            the host reports an infrastructure failure, kind trap).
 * Use tool_error / internal_error to set the message and return the code.
 */
enum { R_JSON = 1, R_TEXT = 2, R_TOOL_ERROR = 3, R_INTERNAL = 4 };

typedef int (*tool_fn)(const jval *args, buf *out);

int tool_error(buf *out, const char *msg);     /* out := msg; returns R_TOOL_ERROR */
int internal_error(buf *out, const char *msg); /* out := msg; returns R_INTERNAL */

/* ---- SQL (weft_sql_v2 batches, docs/abi.md; decision 035) -------------------- */

typedef enum { V_NULL, V_INT, V_UINT, V_FLOAT, V_BOOL, V_STR, V_BYTES, V_TIME, V_DECIMAL, V_JSON } vtype;

/* sqlv is one SQL value: a bound argument or a result cell. Strings (V_STR,
 * V_BYTES, V_DECIMAL as text, V_JSON as its text) in s; V_TIME in i (Unix
 * seconds) and ns. As arguments only V_NULL, V_INT, V_FLOAT, V_BOOL, V_STR and
 * V_JSON (sent as a string: the engine converts it) are used. */
typedef struct {
    vtype t;
    int64_t i;
    uint64_t u;
    double f;
    str s;
    uint32_t ns;
} sqlv;

static inline sqlv SV_NULL(void) { sqlv v = {0}; v.t = V_NULL; return v; }
static inline sqlv SV_INT(int64_t i) { sqlv v = {0}; v.t = V_INT; v.i = i; return v; }
static inline sqlv SV_FLOAT(double f) { sqlv v = {0}; v.t = V_FLOAT; v.f = f; return v; }
static inline sqlv SV_BOOL(bool b) { sqlv v = {0}; v.t = V_BOOL; v.i = b; return v; }
static inline sqlv SV_STR(str s) { sqlv v = {0}; v.t = V_STR; v.s = s; return v; }

/* sqlres is one statement's result. */
typedef struct {
    size_t ncols, nrows;
    sqlv *cells;          /* row-major, nrows*ncols */
    int64_t rows_affected;
    uint64_t last_insert_id;
} sqlres;
#define CELL(r, row, col) (&(r)->cells[(size_t)(row) * (r)->ncols + (col)])

/* A batch collects statements, runs them in one host call (weft_sql_v2.batch)
 * and holds their results. sql_add copies nothing: sql and args must live
 * until sql_run (string literals, arena). */
typedef struct sqlbatch sqlbatch;
sqlbatch *sql_batch(void);
void sql_add(sqlbatch *b, const char *sql, size_t nargs, const sqlv *args);
/* sql_run sends the batch. Returns 0 with results[i] for statement i, or a
 * result code with the message in *out, as the Go module words it:
 * what = "query" (reads) or "exec" (writes); tool = the tool's name, for the
 * module-bug message. A statement error of kind syntax, no_such_table or
 * no_such_column is R_INTERNAL ("tool T: module bug: retail: query: weft sql:
 * statement N: sql KIND: MSG"), any other R_TOOL_ERROR ("retail: query: weft
 * sql: statement N: sql KIND: MSG"). */
int sql_run(sqlbatch *b, const char *what, buf *out, sqlres **results);

/* The current tool's name (set by main.c before each call), for sql_run. */
extern const char *cur_tool;

/* Writes of a write tool: queued with sql_queue while the tool runs, sent by
 * main.c in ONE batch after the tool returns R_JSON or R_TEXT (the Go
 * module's withWrites); a failed write turns the answer into that error
 * (what = "exec") and the host rolls the call back. Tool errors send nothing. */
void sql_queue(const char *sql, size_t nargs, const sqlv *args);

/* ---- the JSON writer (what Go's encoding/json and the Go module print) ------ */

/* w_str writes s as a JSON string as json.Marshal does: HTML characters
 * < > & as \u003c \u003e \u0026, U+2028/U+2029 escaped, invalid UTF-8 as
 * \ufffd, \b \f \n \r \t short, other control bytes \u00XX. */
void w_str(buf *b, str s);
/* w_strlist writes a list of strings ([] for n == 0). */
void w_strlist(buf *b, const str *v, size_t n);
/* w_pyfloat writes a finite double as Python's repr (tau2's JSON): shortest
 * round-trip digits, "198.0" not "198", exponent form ("1e+16", "1.5e-05")
 * only outside 1e-4 <= |x| < 1e16. */
void w_pyfloat(buf *b, double x);
/* py_repr is w_pyfloat into dst (at least 32 bytes, NUL-terminated; also
 * "inf", "-inf", "nan"); returns the length. */
size_t py_repr(char *dst, double x);
/* py_round2 is Python's round(x, 2): correctly rounded to 2 decimals. */
double py_round2(double x);
/* json_strlist is the text json.Marshal gives a []string ("[\"a\",\"b\"]"),
 * the value bound to the orders' JSON list columns (records.JSONList). */
str json_strlist(const str *v, size_t n);

/* ---- the retail records (tau2's data model; examples/modules/retail/records) -- */

typedef struct { str address1, address2, city, country, state, zip; } address;
typedef struct { str name, value; } option;
typedef struct { option *v; size_t n; } options;

typedef struct {
    str source, id;
    bool has_brand, has_last_four, has_balance;
    str brand, last_four;
    double balance;
} payment_method;

typedef struct {
    str user_id, first_name, last_name;
    address address;
    str email;
    payment_method *methods; size_t nmethods; /* in pos order */
    str *orders; size_t norders;
} user;

typedef struct {
    str item_id;
    options options;
    bool available;
    double price;
} variant;

typedef struct {
    str name, product_id;
    variant *variants; size_t nvariants; /* in pos order */
} product;

typedef struct {
    str name, product_id, item_id;
    double price;
    options options;
} order_item;

typedef struct {
    str *tracking_ids; size_t ntracking;
    str *item_ids; size_t nitem_ids;
} fulfillment;

typedef struct {
    str transaction_type;
    double amount;
    str payment_method_id;
} payment;

/* strlist is an optional list: set false is None/NULL (null in JSON). */
typedef struct { bool set; str *v; size_t n; } strlist;
typedef struct { bool set; str v; } optstr;
typedef struct { bool set; double v; } optnum;

typedef struct {
    str order_id, user_id;
    address address;
    order_item *items; size_t nitems;
    str status;
    fulfillment *fulfillments; size_t nfulfillments;
    payment *payments; size_t npayments; /* payment_history */
    optstr cancel_reason;
    strlist exchange_items, exchange_new_items;
    optstr exchange_payment_method_id;
    optnum exchange_price_difference;
    strlist return_items;
    optstr return_payment_method_id;
} order;

/* Record writers: exactly the Go records' MarshalJSON. w_order writes the
 * record shape (all 14 keys, unset ones null); file_shape omits unset
 * optional keys (db.json / export). */
void w_order(buf *b, const order *o, bool file_shape);
void w_user(buf *b, const user *u);
void w_product(buf *b, const product *p);
void w_variant(buf *b, const variant *v);
void w_address(buf *b, const address *a);

/* Loaders. Each returns 0 and sets its outputs (a NULL record: none with
 * that id, compared exactly as Python's ==), or a result code with the
 * message in *out (a failed query, a cell that does not decode).
 *
 * load_records reads the orders, users and products named, all in ONE host
 * call (7 statements per order, 3 per user, 3 per product); orders[i] /
 * users[i] / products[i] (arrays the caller provides, of nord / nusr / nprod
 * pointers) are the records of ord_ids[i] / usr_ids[i] / prod_ids[i]. Pass 0
 * and NULL for what you do not need. */
int load_records(buf *out,
                 const str *ord_ids, size_t nord, order **orders,
                 const str *usr_ids, size_t nusr, user **users,
                 const str *prod_ids, size_t nprod, product **products);
int load_order(buf *out, str id, order **o);
int load_user(buf *out, str id, user **u);
int load_product(buf *out, str id, product **p);

/* Lookups inside records (NULL when absent). */
payment_method *user_method(const user *u, str id);
variant *product_variant(const product *p, str item_id);

/* ---- tools ---------------------------------------------------------------------
 * Each tool: int NAME(const jval *args, buf *out). reads.c (cret-a):
 * get_order_details, get_user_details, get_product_details, get_item_details,
 * find_user_id_by_email, find_user_id_by_name_zip, list_all_product_types,
 * transfer_to_human_agents, and the export hook. writes.c (cret-b): the seven
 * write tools. calc.c (cret-b): calculate.
 */
int t_calculate(const jval *args, buf *out);
int t_cancel_pending_order(const jval *args, buf *out);
int t_exchange_delivered_order_items(const jval *args, buf *out);
int t_find_user_id_by_name_zip(const jval *args, buf *out);
int t_find_user_id_by_email(const jval *args, buf *out);
int t_get_order_details(const jval *args, buf *out);
int t_get_product_details(const jval *args, buf *out);
int t_get_item_details(const jval *args, buf *out);
int t_get_user_details(const jval *args, buf *out);
int t_list_all_product_types(const jval *args, buf *out);
int t_modify_pending_order_address(const jval *args, buf *out);
int t_modify_pending_order_items(const jval *args, buf *out);
int t_modify_pending_order_payment(const jval *args, buf *out);
int t_modify_user_address(const jval *args, buf *out);
int t_return_delivered_order_items(const jval *args, buf *out);
int t_transfer_to_human_agents(const jval *args, buf *out);
int t_export(const jval *args, buf *out);

#endif
