/*
 * calc.c: the calculate tool, a port of examples/modules/retail/pycalc.go and
 * tools_generic.go's calculate (the reference): the arithmetic Python 3's
 * eval gives an expression of digits, '.', + - * / // **, parentheses and
 * spaces; integer literals are exact big integers, '/' true division
 * (correctly rounded), '//' floor division, '**' power (right-associative,
 * binding tighter than a unary sign on its left). The value is rounded to
 * two decimals and written as Python's repr writes a float ("256.0").
 *
 * Errors (tool errors, the Go module's texts): "Invalid characters in
 * expression" (a byte outside the set), "invalid syntax", "division by
 * zero", "numerical result out of range" (a float conversion overflows),
 * "the result is a complex number", "integer result too large" (an integer
 * power of more than 2^22 bits), "a number is not callable" ("(1)(2)").
 *
 * As in the Go module, the whole expression is parsed before anything is
 * evaluated (a syntax error wins over a division by zero before it), and
 * evaluation runs in the reference's post-order, so the first error is the
 * same. Here the parse is a validating pass and the evaluation a second
 * pass over the tokens (evaluating while it parses, in the same order),
 * recursing only on nesting (parentheses, powers), not on the length of a
 * chain like 1+1+...+1 or ---1. More than CALC_MAX_DEPTH nested
 * parentheses and powers is the tool error "expression nested too deeply"
 * (the Go module has no such limit; CPython itself refuses 200 nested
 * parentheses).
 *
 * Float power is Go's math.Pow (with its Exp and Log) ported operation by
 * operation, so results match the Go module's wasm build bit for bit rather
 * than libm's.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "retail.h"

#define CALC_MAX_DEPTH 4000

static const char *const E_SYNTAX = "invalid syntax";
static const char *const E_DIVZERO = "division by zero";
static const char *const E_OVERFLOW = "numerical result out of range";
static const char *const E_COMPLEX = "the result is a complex number";
static const char *const E_TOOLARGE = "integer result too large";
static const char *const E_CALL = "a number is not callable";
static const char *const E_DEPTH = "expression nested too deeply";

/* ---- big integers: sign and magnitude, 32-bit limbs, little-endian ---------- */

typedef struct {
    bool neg;
    size_t n; /* limbs in use; 0 is zero (never negative) */
    uint32_t *d;
} big;

static big bn_alloc(size_t n) {
    big z = {false, 0, AR_NEW(uint32_t, n ? n : 1)};
    return z;
}

static void bn_norm(big *z) {
    while (z->n && z->d[z->n - 1] == 0) z->n--;
    if (!z->n) z->neg = false;
}

static big bn_small(uint32_t v) {
    big z = bn_alloc(1);
    z.d[0] = v;
    z.n = 1;
    bn_norm(&z);
    return z;
}

static size_t bn_bitlen(const big *a) {
    if (!a->n) return 0;
    return (a->n - 1) * 32 + (32 - (size_t)__builtin_clz(a->d[a->n - 1]));
}

static int bn_cmpabs(const big *a, const big *b) {
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (size_t i = a->n; i-- > 0;)
        if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

static big bn_addabs(const big *a, const big *b) {
    const big *x = a->n >= b->n ? a : b, *y = a->n >= b->n ? b : a;
    big z = bn_alloc(x->n + 1);
    uint64_t c = 0;
    for (size_t i = 0; i < x->n; i++) {
        c += (uint64_t)x->d[i] + (i < y->n ? y->d[i] : 0);
        z.d[i] = (uint32_t)c;
        c >>= 32;
    }
    z.d[x->n] = (uint32_t)c;
    z.n = x->n + 1;
    bn_norm(&z);
    return z;
}

/* |a| - |b| for |a| >= |b| */
static big bn_subabs(const big *a, const big *b) {
    big z = bn_alloc(a->n);
    int64_t c = 0;
    for (size_t i = 0; i < a->n; i++) {
        c += (int64_t)a->d[i] - (i < b->n ? b->d[i] : 0);
        z.d[i] = (uint32_t)c;
        c = c < 0 ? -1 : 0;
    }
    z.n = a->n;
    bn_norm(&z);
    return z;
}

static big bn_add(const big *a, const big *b, bool negb) {
    bool bneg = negb ? !b->neg : b->neg;
    if (!b->n) bneg = false;
    big z;
    if (a->neg == bneg) {
        z = bn_addabs(a, b);
        z.neg = a->neg;
    } else if (bn_cmpabs(a, b) >= 0) {
        z = bn_subabs(a, b);
        z.neg = a->neg;
    } else {
        z = bn_subabs(b, a);
        z.neg = bneg;
    }
    bn_norm(&z);
    return z;
}

/* Limb-array multiplication: z (zeroed, na + nb limbs) += a * b. Schoolbook
 * below KARATSUBA_MIN limbs, Karatsuba above (math/big's Exp is
 * sub-quadratic too; a 2^22-bit power would otherwise take seconds). */
#define KARATSUBA_MIN 48

static void mul_school(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *z) {
    for (size_t i = 0; i < na; i++) {
        uint64_t c = 0;
        for (size_t j = 0; j < nb; j++) {
            c += (uint64_t)a[i] * b[j] + z[i + j];
            z[i + j] = (uint32_t)c;
            c >>= 32;
        }
        for (size_t k = i + nb; c; k++) {
            c += z[k];
            z[k] = (uint32_t)c;
            c >>= 32;
        }
    }
}

/* z[0..zn) += x[0..xn), carry propagated within z */
static void limbs_add(uint32_t *z, size_t zn, const uint32_t *x, size_t xn) {
    uint64_t c = 0;
    size_t i = 0;
    for (; i < xn; i++) {
        c += (uint64_t)z[i] + x[i];
        z[i] = (uint32_t)c;
        c >>= 32;
    }
    for (; c && i < zn; i++) {
        c += z[i];
        z[i] = (uint32_t)c;
        c >>= 32;
    }
}

/* z[0..zn) -= x[0..xn) (no borrow out: z >= x) */
static void limbs_sub(uint32_t *z, size_t zn, const uint32_t *x, size_t xn) {
    int64_t c = 0;
    size_t i = 0;
    for (; i < xn; i++) {
        c += (int64_t)z[i] - x[i];
        z[i] = (uint32_t)c;
        c = c < 0 ? -1 : 0;
    }
    for (; c && i < zn; i++) {
        c += z[i];
        z[i] = (uint32_t)c;
        c = c < 0 ? -1 : 0;
    }
}

static void mul_limbs(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *z) {
    if (na < nb) {
        const uint32_t *t = a; a = b; b = t;
        size_t tn = na; na = nb; nb = tn;
    }
    if (nb < KARATSUBA_MIN) {
        mul_school(a, na, b, nb, z);
        return;
    }
    size_t m = (na + 1) / 2;
    if (nb <= m) { /* unbalanced: a in slices of nb limbs */
        uint32_t *t = calloc(2 * nb, sizeof *t);
        if (!t) __builtin_trap();
        for (size_t off = 0; off < na; off += nb) {
            size_t len = na - off < nb ? na - off : nb;
            memset(t, 0, 2 * nb * sizeof *t);
            mul_limbs(a + off, len, b, nb, t);
            limbs_add(z + off, na + nb - off, t, len + nb);
        }
        free(t);
        return;
    }
    /* a = a1 B^m + a0, b = b1 B^m + b0 */
    const uint32_t *a0 = a, *a1 = a + m, *b0 = b, *b1 = b + m;
    size_t na1 = na - m, nb1 = nb - m;
    size_t sn = m + 1;
    uint32_t *sa = calloc(sn, sizeof *sa), *sb = calloc(sn, sizeof *sb);
    uint32_t *z1 = calloc(2 * sn, sizeof *z1), *z0 = calloc(2 * m, sizeof *z0), *z2 = calloc(na1 + nb1, sizeof *z2);
    if (!sa || !sb || !z1 || !z0 || !z2) __builtin_trap();
    memcpy(sa, a0, m * sizeof *sa);
    limbs_add(sa, sn, a1, na1);
    memcpy(sb, b0, m * sizeof *sb);
    limbs_add(sb, sn, b1, nb1);
    mul_limbs(a0, m, b0, m, z0);
    mul_limbs(a1, na1, b1, nb1, z2);
    mul_limbs(sa, sn, sb, sn, z1);
    limbs_sub(z1, 2 * sn, z0, 2 * m);
    limbs_sub(z1, 2 * sn, z2, na1 + nb1);
    limbs_add(z, na + nb, z0, 2 * m);
    limbs_add(z + 2 * m, na + nb - 2 * m, z2, na1 + nb1);
    size_t z1n = 2 * sn;
    while (z1n && z1[z1n - 1] == 0) z1n--;
    limbs_add(z + m, na + nb - m, z1, z1n);
    free(sa);
    free(sb);
    free(z1);
    free(z0);
    free(z2);
}

static big bn_mul(const big *a, const big *b) {
    if (!a->n || !b->n) return bn_alloc(1);
    big z = bn_alloc(a->n + b->n);
    mul_limbs(a->d, a->n, b->d, b->n, z.d);
    z.n = a->n + b->n;
    z.neg = a->neg != b->neg;
    bn_norm(&z);
    return z;
}

static bool bn_bit(const big *a, size_t i) { return i / 32 < a->n && (a->d[i / 32] >> (i % 32)) & 1; }

static big bn_shl(const big *a, size_t s) {
    if (!a->n) return bn_alloc(1);
    size_t w = s / 32, r = s % 32;
    big z = bn_alloc(a->n + w + 1);
    for (size_t i = 0; i < a->n; i++) {
        uint64_t v = (uint64_t)a->d[i] << r;
        z.d[i + w] |= (uint32_t)v;
        z.d[i + w + 1] |= (uint32_t)(v >> 32);
    }
    z.n = a->n + w + 1;
    bn_norm(&z);
    return z;
}

/* bn_divmodabs: q = |a| / |b|, r = |a| % |b| (b != 0), both non-negative. */
static void bn_divmodabs(const big *a, const big *b, big *q, big *r) {
    if (bn_cmpabs(a, b) < 0) {
        *q = bn_alloc(1);
        *r = *a;
        r->neg = false;
        return;
    }
    if (b->n == 1) { /* short division */
        big z = bn_alloc(a->n);
        uint64_t rem = 0;
        for (size_t i = a->n; i-- > 0;) {
            uint64_t cur = (rem << 32) | a->d[i];
            z.d[i] = (uint32_t)(cur / b->d[0]);
            rem = cur % b->d[0];
        }
        z.n = a->n;
        bn_norm(&z);
        *q = z;
        *r = bn_small((uint32_t)rem);
        return;
    }
    /* long division, one bit at a time: r = r*2 + bit; r >= b: r -= b */
    size_t bits = bn_bitlen(a);
    big z = bn_alloc(a->n);
    z.n = a->n;
    big rr = bn_alloc(b->n + 1);
    rr.d = AR_NEW(uint32_t, b->n + 2);
    for (size_t i = bits; i-- > 0;) {
        /* rr <<= 1 | bit */
        uint32_t carry = bn_bit(a, i);
        for (size_t k = 0; k < b->n + 1; k++) {
            uint32_t v = rr.d[k];
            rr.d[k] = (v << 1) | carry;
            carry = v >> 31;
        }
        rr.n = b->n + 1;
        bn_norm(&rr);
        if (bn_cmpabs(&rr, b) >= 0) {
            int64_t c = 0;
            for (size_t k = 0; k < b->n + 1; k++) {
                c += (int64_t)rr.d[k] - (k < b->n ? b->d[k] : 0);
                rr.d[k] = (uint32_t)c;
                c = c < 0 ? -1 : 0;
            }
            z.d[i / 32] |= 1u << (i % 32);
        }
    }
    rr.n = b->n + 1;
    bn_norm(&rr);
    bn_norm(&z);
    *q = z;
    *r = rr;
}

/* Python's a // b (floor division), b != 0. */
static big bn_floordiv(const big *a, const big *b) {
    big q, r;
    bn_divmodabs(a, b, &q, &r);
    q.neg = q.n && (a->neg != b->neg);
    if (r.n && (a->neg != b->neg)) { /* remainder's sign (a's) differs from b's */
        big one = bn_small(1);
        q = bn_add(&q, &one, true);
    }
    return q;
}

static big bn_from_dec(const char *s, size_t n) {
    big z = bn_alloc(n / 9 + 2);
    for (size_t i = 0; i < n; i++) {
        uint64_t c = (uint64_t)(s[i] - '0');
        for (size_t k = 0; k < z.n; k++) {
            c += (uint64_t)z.d[k] * 10;
            z.d[k] = (uint32_t)c;
            c >>= 32;
        }
        if (c) z.d[z.n++] = (uint32_t)c;
    }
    bn_norm(&z);
    return z;
}

/* round_double is the double nearest (q + f) * 2^e, ties to even, where
 * 0 <= f < 1 is nonzero iff sticky; +Inf when it overflows. q != 0. */
static double round_double(uint64_t q, int e, bool sticky) {
    int bl = 64 - __builtin_clzll(q);
    int msb = e + bl - 1;
    if (msb > 1023) return INFINITY;
    int lsb = msb - 52 < -1074 ? -1074 : msb - 52;
    int drop = lsb - e;
    if (drop <= 0) return ldexp((double)q, e); /* exact: at most 53 bits */
    if (drop > 64) return 0.0;
    uint64_t m, rem, half;
    if (drop == 64) {
        m = 0;
        rem = q;
        half = 1ull << 63;
    } else {
        m = q >> drop;
        rem = q & ((1ull << drop) - 1);
        half = 1ull << (drop - 1);
    }
    if (rem > half || (rem == half && (sticky || (m & 1)))) m++;
    return ldexp((double)m, lsb);
}

/* bn_to_double is float(a), correctly rounded; false on overflow. */
static bool bn_to_double(const big *a, double *out) {
    if (!a->n) {
        *out = 0.0;
        return true;
    }
    size_t bl = bn_bitlen(a);
    uint64_t q = 0;
    bool sticky = false;
    int e = 0;
    if (bl <= 64) {
        for (size_t i = a->n; i-- > 0;) q = (q << 32) | a->d[i];
    } else {
        if (bl > 2000) return false;
        size_t s = bl - 64;
        for (size_t i = 0; i < 64; i++)
            if (bn_bit(a, s + i)) q |= 1ull << i;
        for (size_t i = 0; i < s && !sticky; i++) sticky = bn_bit(a, i);
        e = (int)s;
    }
    double f = round_double(q, e, sticky);
    if (isinf(f)) return false;
    *out = a->neg ? -f : f;
    return true;
}

/* bn_truediv is a / b (b != 0) correctly rounded, as big.Rat's Float64: the
 * magnitude is rounded, then negated (a zero result is +0 unless it
 * underflowed from a negative quotient). false on overflow. */
static bool bn_truediv(const big *a, const big *b, double *out) {
    if (!a->n) {
        *out = 0.0;
        return true;
    }
    long ln = (long)bn_bitlen(a), ld = (long)bn_bitlen(b);
    long s = 55 - (ln - ld);
    double f;
    if (s < -1100) {
        return false; /* |a/b| >= 2^1044: overflow */
    } else if (s > 1200) {
        f = 0.0; /* |a/b| < 2^-1144: underflows to zero */
    } else {
        big N = *a, D = *b;
        N.neg = D.neg = false;
        if (s > 0) N = bn_shl(&N, (size_t)s);
        else if (s < 0) D = bn_shl(&D, (size_t)(-s));
        big q, r;
        bn_divmodabs(&N, &D, &q, &r);
        uint64_t qq = 0;
        for (size_t i = q.n; i-- > 0;) qq = (qq << 32) | q.d[i];
        /* |a/b| = (qq + r/D) * 2^-s; qq has 55 or 56 bits */
        f = round_double(qq, (int)-s, r.n != 0);
        if (isinf(f)) return false;
    }
    *out = (a->neg != b->neg) ? -f : f;
    return true;
}

/* ---- Go's math.Pow, Exp, Log (pure Go versions, as in its wasm build) ------- */

static double go_ldexp(double frac, int exp) { return ldexp(frac, exp); }

static double go_expmulti(double hi, double lo, int k) {
    const double P1 = 1.66666666666666657415e-01, P2 = -2.77777777770155933842e-03,
                 P3 = 6.61375632143793436117e-05, P4 = -1.65339022054652515390e-06,
                 P5 = 4.13813679705723846039e-08;
    double r = hi - lo;
    double t = r * r;
    double c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    double y = 1 - ((lo - (r * c) / (2 - c)) - hi);
    return go_ldexp(y, k);
}

static double go_exp(double x) {
    const double Ln2Hi = 6.93147180369123816490e-01, Ln2Lo = 1.90821492927058770002e-10,
                 Log2e = 1.44269504088896338700e+00, Overflow = 7.09782712893383973096e+02,
                 Underflow = -7.45133219101941108420e+02, NearZero = 1.0 / (1 << 28);
    if (x != x) return x;
    if (x > Overflow) return INFINITY;
    if (x < Underflow) return 0;
    if (-NearZero < x && x < NearZero) return 1 + x;
    int k = 0;
    if (x < 0) k = (int)(Log2e * x - 0.5);
    else if (x > 0) k = (int)(Log2e * x + 0.5);
    double hi = x - (double)k * Ln2Hi;
    double lo = (double)k * Ln2Lo;
    return go_expmulti(hi, lo, k);
}

static double go_log(double x) {
    const double Ln2Hi = 6.93147180369123816490e-01, Ln2Lo = 1.90821492927058770002e-10,
                 L1 = 6.666666666666735130e-01, L2 = 3.999999999940941908e-01, L3 = 2.857142874366239149e-01,
                 L4 = 2.222219843214978396e-01, L5 = 1.818357216161805012e-01, L6 = 1.531383769920937332e-01,
                 L7 = 1.479819860511658591e-01, Sqrt2 = 1.41421356237309504880168872420969808;
    if (x != x || (isinf(x) && x > 0)) return x;
    if (x < 0) return NAN;
    if (x == 0) return -INFINITY;
    int ki;
    double f1 = frexp(x, &ki);
    if (f1 < Sqrt2 / 2) {
        f1 *= 2;
        ki--;
    }
    double f = f1 - 1;
    double k = (double)ki;
    double s = f / (2 + f);
    double s2 = s * s;
    double s4 = s2 * s2;
    double t1 = s2 * (L1 + s4 * (L3 + s4 * (L5 + s4 * L7)));
    double t2 = s4 * (L2 + s4 * (L4 + s4 * L6));
    double R = t1 + t2;
    double hfsq = 0.5 * f * f;
    return k * Ln2Hi - ((hfsq - (s * (hfsq + R) + k * Ln2Lo)) - f);
}

/* go_pow is Go's math.Pow for the arguments floatPow passes it: x > 0,
 * x != 1, y finite and nonzero. */
static double go_pow(double x, double y) {
    if (y == 1) return x;
    if (y == 0.5) return sqrt(x);
    if (y == -0.5) return 1 / sqrt(x);
    double yi, yf = modf(fabs(y), &yi);
    if (yf != 0 && x < 0) return NAN;
    if (yi >= 9223372036854775808.0) {
        if (x == -1) return 1;
        if ((fabs(x) < 1) == (y > 0)) return 0;
        return INFINITY;
    }
    double a1 = 1.0;
    long long ae = 0;
    if (yf != 0) {
        if (yf > 0.5) {
            yf--;
            yi++;
        }
        a1 = go_exp(yf * go_log(x));
    }
    int xe0;
    double x1 = frexp(x, &xe0);
    long long xe = xe0;
    for (int64_t i = (int64_t)yi; i != 0; i >>= 1) {
        if (xe < -(1 << 12) || (1 << 12) < xe) {
            ae += xe;
            break;
        }
        if (i & 1) {
            a1 *= x1;
            ae += xe;
        }
        x1 *= x1;
        xe *= 2;
        if (x1 < .5) {
            x1 += x1;
            xe--;
        }
    }
    if (y < 0) {
        a1 = 1 / a1;
        ae = -ae;
    }
    if (ae > 100000) ae = 100000;
    if (ae < -100000) ae = -100000;
    return go_ldexp(a1, (int)ae);
}

static bool is_odd_integer(double x) { return fmod(fabs(x), 2.0) == 1.0; }

/* float_pow is CPython's float power (pycalc.go floatPow). */
static const char *float_pow(double iv, double iw, double *out) {
    if (iw == 0) return *out = 1, NULL;
    if (isnan(iv)) return *out = iv, NULL;
    if (isnan(iw)) return *out = (iv == 1 ? 1 : iw), NULL;
    if (isinf(iw)) {
        double a = fabs(iv);
        if (a == 1) return *out = 1, NULL;
        if ((iw > 0) == (a > 1)) return *out = fabs(iw), NULL;
        return *out = 0, NULL;
    }
    if (isinf(iv)) {
        bool odd = is_odd_integer(iw);
        if (iw > 0) return *out = odd ? iv : fabs(iv), NULL;
        return *out = odd ? copysign(0, iv) : 0, NULL;
    }
    if (iv == 0) {
        if (iw < 0) return E_DIVZERO;
        return *out = is_odd_integer(iw) ? iv : 0, NULL;
    }
    if (iv == 1) return *out = 1, NULL;
    bool negate = false;
    if (iv < 0) {
        if (iw != floor(iw)) return E_COMPLEX;
        iv = -iv;
        negate = is_odd_integer(iw);
    }
    if (iv == 1) return *out = negate ? -1 : 1, NULL;
    double r = go_pow(iv, iw);
    if (negate) r = -r;
    if (isinf(r)) return E_OVERFLOW;
    *out = r;
    return NULL;
}

/* float_floordiv is CPython's float floor division (floatFloorDiv). */
static const char *float_floordiv(double vx, double wx, double *out) {
    if (wx == 0) return E_DIVZERO;
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0 && ((wx < 0) != (mod < 0))) div -= 1.0;
    if (div != 0) {
        double fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
        *out = fl;
    } else {
        *out = copysign(0, vx / wx);
    }
    return NULL;
}

/* ---- values ----------------------------------------------------------------- */

typedef struct {
    bool is_int;
    big i;
    double f;
} num;

static const char *to_float(const num *v, double *out) {
    if (!v->is_int) return *out = v->f, NULL;
    if (!bn_to_double(&v->i, out)) return E_OVERFLOW;
    return NULL;
}

static const char *int_op(char op, const big *a, const big *b, num *z) {
    z->is_int = true;
    switch (op) {
    case '+': z->i = bn_add(a, b, false); return NULL;
    case '-': z->i = bn_add(a, b, true); return NULL;
    case '*': z->i = bn_mul(a, b); return NULL;
    case '/':
        if (!b->n) return E_DIVZERO;
        z->is_int = false;
        if (!bn_truediv(a, b, &z->f)) return E_OVERFLOW;
        return NULL;
    case 'f': /* // */
        if (!b->n) return E_DIVZERO;
        z->i = bn_floordiv(a, b);
        return NULL;
    case 'p': { /* ** */
        if (b->neg) {
            num na = {true, *a, 0}, nb = {true, *b, 0};
            double x, y;
            const char *err = to_float(&na, &x);
            if (!err) err = to_float(&nb, &y);
            if (err) return err;
            z->is_int = false;
            return float_pow(x, y, &z->f);
        }
        bool absgt1 = a->n > 1 || (a->n == 1 && a->d[0] > 1);
        if (absgt1) {
            /* Go: !b.IsInt64() || bitlen(a)*b > 1<<22 */
            if (b->n > 2 || (b->n == 2 && (b->d[1] >> 31))) return E_TOOLARGE;
            uint64_t e = b->n == 0 ? 0 : (b->n == 1 ? b->d[0] : ((uint64_t)b->d[1] << 32 | b->d[0]));
            uint64_t bl = bn_bitlen(a);
            if (e > (1u << 22) || bl * e > (1u << 22)) return E_TOOLARGE;
            big r = bn_small(1), base = *a;
            for (uint64_t k = e; k; k >>= 1) {
                if (k & 1) r = bn_mul(&r, &base);
                if (k > 1) base = bn_mul(&base, &base);
            }
            z->i = r;
            return NULL;
        }
        /* |a| <= 1: 0, 1 or -1 to a non-negative power */
        if (!b->n) z->i = bn_small(1);
        else if (!a->n) z->i = bn_small(0);
        else {
            z->i = bn_small(1);
            z->i.neg = a->neg && (b->d[0] & 1);
        }
        return NULL;
    }
    }
    return E_SYNTAX;
}

static const char *float_op(char op, double x, double y, double *out) {
    switch (op) {
    case '+': return *out = x + y, NULL;
    case '-': return *out = x - y, NULL;
    case '*': return *out = x * y, NULL;
    case '/':
        if (y == 0) return E_DIVZERO;
        return *out = x / y, NULL;
    case 'f': return float_floordiv(x, y, out);
    case 'p': return float_pow(x, y, out);
    }
    return E_SYNTAX;
}

static const char *bin_op(char op, const num *a, const num *b, num *z) {
    if (a->is_int && b->is_int) return int_op(op, &a->i, &b->i, z);
    double x, y;
    const char *err = to_float(a, &x);
    if (!err) err = to_float(b, &y);
    if (err) return err;
    z->is_int = false;
    return float_op(op, x, y, &z->f);
}

/* ---- tokens ------------------------------------------------------------------ */

enum { T_NUM, T_OP, T_EOF };

typedef struct {
    int kind;
    char op; /* + - * / ( ) 'f' (//) 'p' (**) */
    const char *p;
    size_t n;
    bool is_float;
} token;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static const char *tokenize(const char *s, size_t n, token **out, size_t *count) {
    token *t = AR_NEW(token, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        char c = s[i];
        if (c == ' ') {
            i++;
        } else if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(s[i + 1]))) {
            size_t j = i;
            while (j < n && is_digit(s[j])) j++;
            bool fl = false;
            if (j < n && s[j] == '.') {
                fl = true;
                j++;
                while (j < n && is_digit(s[j])) j++;
            }
            if (!fl && j - i > 1 && s[i] == '0')
                for (size_t q = i + 1; q < j; q++)
                    if (s[q] != '0') return E_SYNTAX; /* leading zeros in a decimal integer */
            t[k++] = (token){T_NUM, 0, s + i, j - i, fl};
            i = j;
        } else if (c == '*' || c == '/') {
            if (i + 1 < n && s[i + 1] == c) {
                t[k++] = (token){T_OP, c == '*' ? 'p' : 'f', s + i, 2, false};
                i += 2;
            } else {
                t[k++] = (token){T_OP, c, s + i, 1, false};
                i++;
            }
        } else if (c == '+' || c == '-' || c == '(' || c == ')') {
            t[k++] = (token){T_OP, c, s + i, 1, false};
            i++;
        } else {
            return E_SYNTAX; /* a '.' that starts no number */
        }
    }
    t[k++] = (token){T_EOF, 0, NULL, 0, false};
    *out = t;
    *count = k;
    return NULL;
}

/* ---- parser / evaluator -------------------------------------------------------
 * One recursive descent over the tokens, as pycalc.go's grammar:
 *   sum    = term {("+" | "-") term}
 *   term   = factor {("*" | "//" | "/") factor}
 *   factor = ("-" | "+") factor | power
 *   power  = atom ["**" factor]
 *   atom   = NUM | "(" sum ")"      (not "()", not followed by "(")
 * With eval false it only checks the syntax; with eval true (after a
 * successful check) it computes the value in the reference's post-order. */

typedef struct {
    const token *t;
    size_t p;
    bool eval;
    int depth;
} calc;

static bool accept(calc *c, char op) {
    if (c->t[c->p].kind == T_OP && c->t[c->p].op == op) {
        c->p++;
        return true;
    }
    return false;
}

static const char *p_sum(calc *c, num *v);

static const char *literal(const token *t, num *v) {
    if (!t->is_float) {
        v->is_int = true;
        v->i = bn_from_dec(t->p, t->n);
        return NULL;
    }
    char *z = AR_NEW(char, t->n + 1);
    memcpy(z, t->p, t->n);
    double f = strtod(z, NULL);
    if (isinf(f)) return E_SYNTAX; /* strconv.ParseFloat's range error */
    v->is_int = false;
    v->f = f;
    return NULL;
}

static const char *p_atom(calc *c, num *v) {
    const token *t = &c->t[c->p];
    const char *err;
    if (t->kind == T_NUM) {
        c->p++;
        if (c->eval && (err = literal(t, v))) return err;
    } else if (accept(c, '(')) {
        if (c->t[c->p].kind == T_OP && c->t[c->p].op == ')') return E_SYNTAX;
        if ((err = p_sum(c, v))) return err;
        if (!accept(c, ')')) return E_SYNTAX;
    } else {
        return E_SYNTAX;
    }
    if (c->t[c->p].kind == T_OP && c->t[c->p].op == '(') return E_CALL;
    return NULL;
}

static const char *p_factor(calc *c, num *v);

static const char *p_power(calc *c, num *v) {
    const char *err = p_atom(c, v);
    if (err) return err;
    if (accept(c, 'p')) {
        num e;
        if (++c->depth > CALC_MAX_DEPTH) return E_DEPTH;
        if ((err = p_factor(c, &e))) return err;
        c->depth--;
        if (c->eval) {
            num z;
            if ((err = bin_op('p', v, &e, &z))) return err;
            *v = z;
        }
    }
    return NULL;
}

static const char *p_factor(calc *c, num *v) {
    /* ("-" | "+")* power, the signs counted rather than recursed on: the
     * reference applies them innermost first, and negation cannot fail */
    bool neg = false;
    for (;;) {
        if (accept(c, '-')) neg = !neg;
        else if (!accept(c, '+')) break;
    }
    const char *err = p_power(c, v);
    if (err) return err;
    if (c->eval && neg) {
        if (v->is_int) {
            if (v->i.n) v->i.neg = !v->i.neg;
        } else {
            v->f = -v->f;
        }
    }
    return NULL;
}

static const char *p_term(calc *c, num *v) {
    const char *err = p_factor(c, v);
    if (err) return err;
    for (;;) {
        char op;
        if (accept(c, '*')) op = '*';
        else if (accept(c, 'f')) op = 'f';
        else if (accept(c, '/')) op = '/';
        else return NULL;
        num r;
        if ((err = p_factor(c, &r))) return err;
        if (c->eval) {
            num z;
            if ((err = bin_op(op, v, &r, &z))) return err;
            *v = z;
        }
    }
}

static const char *p_sum(calc *c, num *v) {
    if (++c->depth > CALC_MAX_DEPTH) return E_DEPTH;
    const char *err = p_term(c, v);
    if (err) return err;
    for (;;) {
        char op;
        if (accept(c, '+')) op = '+';
        else if (accept(c, '-')) op = '-';
        else break;
        num r;
        if ((err = p_term(c, &r))) return err;
        if (c->eval) {
            num z;
            if ((err = bin_op(op, v, &r, &z))) return err;
            *v = z;
        }
    }
    c->depth--;
    return NULL;
}

/* calc_eval evaluates expr as calculate does, before rounding: NULL and
 * *out, or the error text. */
static const char *calc_eval(str expr, double *out) {
    for (size_t i = 0; i < expr.n; i++)
        if (!strchr("0123456789+-*/(). ", expr.p[i]) || expr.p[i] == 0) return "Invalid characters in expression";
    token *t;
    size_t nt;
    const char *err = tokenize(expr.p, expr.n, &t, &nt);
    if (err) return err;
    num v;
    calc c = {t, 0, false, 0};
    if ((err = p_sum(&c, &v))) return err;
    if (t[c.p].kind != T_EOF) return E_SYNTAX;
    calc e = {t, 0, true, 0};
    if ((err = p_sum(&e, &v))) return err;
    return to_float(&v, out);
}

/* calculate: argument expression (string). Returns the value rounded to two
 * decimals as Python's repr writes it ("4.0", "33.33", "inf"). */
int t_calculate(const jval *args, buf *out) {
    double v;
    const char *err = calc_eval(arg_str(args, "expression"), &v);
    if (err) return tool_error(out, err);
    char tmp[40];
    size_t n = py_repr(tmp, py_round2(v));
    out->len = 0;
    buf_putn(out, tmp, n);
    return R_TEXT;
}
