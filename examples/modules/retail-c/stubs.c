/*
 * stubs.c: weak stand-ins for tools defined in writes.c and calc.c, so the
 * module links while those are written; the real definitions (strong
 * symbols) replace them at link time. A stub answers an internal error.
 */
#include "retail.h"

#define STUB(fn) \
    __attribute__((weak)) int fn(const jval *args, buf *out) { \
        (void)args; \
        return internal_error(out, #fn ": not implemented"); \
    }

STUB(t_calculate)
STUB(t_cancel_pending_order)
STUB(t_exchange_delivered_order_items)
STUB(t_modify_pending_order_address)
STUB(t_modify_pending_order_items)
STUB(t_modify_pending_order_payment)
STUB(t_modify_user_address)
STUB(t_return_delivered_order_items)
