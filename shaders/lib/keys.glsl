// Keys: storage type, the order-preserving map to unsigned bits, and digit extraction.
//
// KEY_BITS (32 or 64) is a compile-time define: one SPIR-V module per key width. The kind of
// key and the direction are specialization constants. The map matches src/prim/keys.h:
// signed keys flip the sign bit; floats flip every bit when negative and the sign bit
// otherwise (IEEE 754 totalOrder); descending order complements the result, which keeps
// the sort stable where reversing the output would not.

// Key arrays by device address: read-write, and the read-only and write-only views a sort pass
// uses for its input and output (which never alias within a pass: src/prim/radix_sort.c).
#if KEY_BITS == 64
#define key_t uint64_t
layout(buffer_reference, std430, buffer_reference_align = 8) buffer KeyArray { key_t keys[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly restrict buffer KeysIn { key_t keys[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly restrict buffer KeysOut { key_t keys[]; };
#else
#define key_t uint
layout(buffer_reference, std430, buffer_reference_align = 4) buffer KeyArray { key_t keys[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly restrict buffer KeysIn { key_t keys[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly restrict buffer KeysOut { key_t keys[]; };
#endif

layout(constant_id = GS_SPEC_KEY_KIND) const uint KEY_KIND = 0; // 0 unsigned, 1 signed, 2 float
layout(constant_id = GS_SPEC_KEY_DESCENDING) const uint KEY_DESCENDING = 0;

const key_t KEY_SIGN_BIT = key_t(1) << (KEY_BITS - 1);
// Padding for partial tiles: the largest ordered key, so padding ranks after every real key.
const key_t ORDERED_KEY_MAX = ~key_t(0);

// The float map as a select, not as one xor with the key's sign spread over its bits and the
// sign bit set (k ^ (int(k) >> 31 | sign bit)): that form was no faster and took no registers
// off the passes that map (doc/tuning.md, "Sort: the float key map as a select").
key_t key_to_ordered(key_t k) {
  key_t o = k;
  if (KEY_KIND == 1) o = k ^ KEY_SIGN_BIT;
  if (KEY_KIND == 2) o = (k & KEY_SIGN_BIT) != 0 ? ~k : (k | KEY_SIGN_BIT);
  if (KEY_DESCENDING != 0) o = ~o;
  return o;
}

key_t key_from_ordered(key_t o) {
  if (KEY_DESCENDING != 0) o = ~o;
  if (KEY_KIND == 1) return o ^ KEY_SIGN_BIT;
  if (KEY_KIND == 2) return (o & KEY_SIGN_BIT) != 0 ? (o ^ KEY_SIGN_BIT) : ~o;
  return o;
}

// `bits` wide digit (1..8) of an ordered key starting at bit `shift`.
uint key_digit(key_t ordered, uint shift, uint bits) {
  return uint(ordered >> shift) & ((1u << bits) - 1u);
}
