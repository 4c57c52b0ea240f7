// Scan operators on an accumulator representation ("rep"), and the subgroup scans built on
// them.
//
// ACC_REP (compile-time) is how values are combined:
//   1 = uint, 2 = uint64_t: integer sums (wrapping: signed and unsigned add alike) and every
//       min/max, which compare ordered bits (lib/keys.glsl's map: IEEE totalOrder for floats);
//   3 = float, 4 = double: float sums.
// Specialization constants say what the bits mean:
//   SCAN_OP 0 sum, 1 min, 2 max; IN_KIND / ACC_KIND 0 unsigned, 1 signed, 2 float;
//   IN_BITS (compile-time) and ACC_BITS are the widths of an input element and of an output.

layout(constant_id = GS_SPEC_SCAN_OP) const uint SCAN_OP = 0;
layout(constant_id = GS_SPEC_SCAN_IN_KIND) const uint IN_KIND = 0;
layout(constant_id = GS_SPEC_SCAN_ACC_KIND) const uint ACC_KIND = 0;

#if ACC_REP == 1
#define rep_t uint
#define ACC_BITS 32
#elif ACC_REP == 2
#define rep_t uint64_t
#define ACC_BITS 64
#elif ACC_REP == 3
#define rep_t float
#define ACC_BITS 32
#else
#define rep_t double
#define ACC_BITS 64
#endif

#if IN_BITS == 64
#define in_t uint64_t
#else
#define in_t uint
#endif
#if ACC_BITS == 64
#define acc_bits_t uint64_t
#else
#define acc_bits_t uint
#endif

const bool REP_IS_FLOAT = ACC_REP >= 3;
const acc_bits_t ACC_SIGN = acc_bits_t(1) << (ACC_BITS - 1);

// Ordered bits of a value of ACC_KIND: unsigned order is the value's order.
acc_bits_t acc_ordered(acc_bits_t b) {
  if (ACC_KIND == 1) return b ^ ACC_SIGN;
  if (ACC_KIND == 2) return (b & ACC_SIGN) != 0 ? ~b : (b | ACC_SIGN);
  return b;
}

acc_bits_t acc_from_ordered(acc_bits_t o) {
  if (ACC_KIND == 1) return o ^ ACC_SIGN;
  if (ACC_KIND == 2) return (o & ACC_SIGN) != 0 ? (o ^ ACC_SIGN) : ~o;
  return o;
}

#if ACC_BITS == 64
// f32 bits to f64 bits, exactly on every device: NaNs keep their sign and payload and become
// quiet (IEEE convertFormat, as x86 does; some GPUs' conversion drops the sign), denormals
// are scaled exactly (some flush them to zero).
uint64_t f32_bits_to_f64_bits(uint b) {
  const uint exponent = b & 0x7F800000u, mantissa = b & 0x007FFFFFu;
  const uint64_t sign = uint64_t(b & 0x80000000u) << 32;
  if (exponent == 0x7F800000u && mantissa != 0u)
    return sign | 0x7FF8000000000000ul | (uint64_t(mantissa & 0x003FFFFFu) << 29);
  if (exponent == 0u && mantissa != 0u) // m * 2^-149, exact in double
    return sign | doubleBitsToUint64(ldexp(double(mantissa), -149));
  return doubleBitsToUint64(double(uintBitsToFloat(b)));
}
#endif

// An input element's raw bits as the accumulator's raw bits (numeric conversion when --acc
// widens: zero- or sign-extension, or conversion to double).
acc_bits_t to_acc_bits(in_t raw) {
#if IN_BITS == ACC_BITS
  return acc_bits_t(raw);
#elif ACC_BITS == 64
  if (ACC_KIND == 2) { // to f64
    if (IN_KIND == 2) return f32_bits_to_f64_bits(uint(raw));
    const double d = IN_KIND == 1 ? double(int(raw)) : double(uint(raw));
    return doubleBitsToUint64(d);
  }
  if (IN_KIND == 1) return uint64_t(int64_t(int(raw))); // sign-extend
  return uint64_t(raw);
#else
  return acc_bits_t(raw);
#endif
}

#if ACC_REP == 3
rep_t rep_from_bits(acc_bits_t b) { return uintBitsToFloat(b); }
acc_bits_t bits_from_rep(rep_t r) { return floatBitsToUint(r); }
#elif ACC_REP == 4
rep_t rep_from_bits(acc_bits_t b) { return uint64BitsToDouble(b); }
acc_bits_t bits_from_rep(rep_t r) { return doubleBitsToUint64(r); }
#else
rep_t rep_from_bits(acc_bits_t b) { return SCAN_OP == 0 ? b : acc_ordered(b); }
acc_bits_t bits_from_rep(rep_t r) { return SCAN_OP == 0 ? r : acc_from_ordered(r); }
#endif

rep_t rep_of_input(in_t raw) { return rep_from_bits(to_acc_bits(raw)); }

// The identity of the operator: 0 for sums, the largest ordered value for min, the smallest
// for max (so an exclusive min scan starts at the type's maximum, e.g. +NaN for floats).
rep_t rep_identity() {
#if ACC_REP >= 3
  return rep_t(0);
#else
  return SCAN_OP == 1 ? ~rep_t(0) : rep_t(0);
#endif
}

rep_t combine(rep_t a, rep_t b) {
#if ACC_REP >= 3
  return a + b;
#else
  if (SCAN_OP == 1) return min(a, b);
  if (SCAN_OP == 2) return max(a, b);
  return a + b;
#endif
}

rep_t subgroup_inclusive(rep_t v) {
#if ACC_REP >= 3
  return subgroupInclusiveAdd(v);
#else
  if (SCAN_OP == 1) return subgroupInclusiveMin(v);
  if (SCAN_OP == 2) return subgroupInclusiveMax(v);
  return subgroupInclusiveAdd(v);
#endif
}

rep_t subgroup_reduce(rep_t v) {
#if ACC_REP >= 3
  return subgroupAdd(v);
#else
  if (SCAN_OP == 1) return subgroupMin(v);
  if (SCAN_OP == 2) return subgroupMax(v);
  return subgroupAdd(v);
#endif
}

// Exclusive from inclusive: the previous lane's value, the identity in lane 0.
rep_t subgroup_exclusive_from(rep_t inclusive) {
  const rep_t before = subgroupShuffleUp(inclusive, 1u);
  return gl_SubgroupInvocationID == 0u ? rep_identity() : before;
}
