'use strict';
// weft.plugin.v2.Value <-> JavaScript values. Value is weft's JSON/SQL value
// message (plugin.proto): one of null_value, bool_value, int_value (int64;
// 64-bit integers arrive as decimal strings), double_value, string_value,
// bytes_value, list_value {values}, object_value {fields: [{key, value}]}
// (fields in order: JSON Schema property order reaches prompts).

// toValue converts a JSON-like JavaScript value. Integers in the safe range
// become int_value, other numbers double_value; BigInt is int_value.
function toValue(v) {
  if (v === null || v === undefined) return { null_value: true };
  switch (typeof v) {
    case 'boolean':
      return { bool_value: v };
    case 'bigint':
      return v >= -(2n ** 63n) && v < 2n ** 63n ? { int_value: v.toString() } : { double_value: Number(v) };
    case 'number':
      return Number.isSafeInteger(v) ? { int_value: String(v) } : { double_value: v };
    case 'string':
      return { string_value: v };
    default:
      break;
  }
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return { bytes_value: Buffer.from(v) };
  if (Array.isArray(v)) return { list_value: { values: v.map(toValue) } };
  if (typeof v === 'object') {
    return { object_value: { fields: Object.entries(v).map(([key, x]) => ({ key, value: toValue(x) })) } };
  }
  throw new TypeError(`toValue: cannot convert a ${typeof v}`);
}

// fromValue converts a decoded Value (undefined for an absent one). An
// int_value beyond 2^53 becomes a BigInt; a Value with no kind set is null.
function fromValue(v) {
  if (v === undefined || v === null) return undefined;
  if ('bool_value' in v) return v.bool_value;
  if ('int_value' in v) {
    const n = BigInt(v.int_value);
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  }
  if ('double_value' in v) return v.double_value;
  if ('string_value' in v) return v.string_value;
  if ('bytes_value' in v) return Buffer.from(v.bytes_value);
  if ('list_value' in v) return ((v.list_value && v.list_value.values) || []).map(fromValue);
  if ('object_value' in v) {
    const fields = (v.object_value && v.object_value.fields) || [];
    return Object.fromEntries(fields.map((f) => [f.key || '', fromValue(f.value)]));
  }
  return null;
}

module.exports = { toValue, fromValue };
