#version 460
#extension GL_GOOGLE_include_directive : require
// The keys of records, as an array: keys[i] = the key at key_offset in record i, at any
// alignment (a key spans at most three input words). The first step of sorting records that
// live on the GPU: their keys are sorted with their indices, then gather_records moves them.
// A key of another form (narrow, half, big-endian: pc.form) is extracted as its ordered bits,
// which sort as unsigned integers; GS_EXTRACT_STORE writes sorted ordered bits back as fields.
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(push_constant, std430) uniform Push { gs_extract_push pc; };

uint word_at_byte(uint at) {
  const uint shift = 8u * (at % 4u);
  WordArray records = WordArray(pc.records);
  const uint lo = records.words[at / 4u];
  if (shift == 0u) return lo;
  return (lo >> shift) | (records.words[at / 4u + 1u] << (32u - shift));
}

// The field's bytes as an unsigned number (its byte order undone), of `bytes` <= 8.
uvec2 field_bits(uint at, uint bytes, bool big_endian) {
  // (a narrow field reads a second word only where it reaches into it: never past the data)
  const uint lo = bytes >= 4u || at % 4u + bytes > 4u ? word_at_byte(at) : WordArray(pc.records).words[at / 4u] >> (8u * (at % 4u));
  uvec2 raw = uvec2(lo, bytes > 4u ? word_at_byte(at + 4u) : 0u);
  if (!big_endian) return bytes >= 4u ? (bytes == 8u ? raw : uvec2(raw.x, 0u)) : uvec2(raw.x & ((1u << (8u * bytes)) - 1u), 0u);
  // big-endian: byte k of the field is byte (bytes - 1 - k) of the number
  uvec2 v = uvec2(0u);
  for (uint k = 0u; k < bytes; k++) {
    const uint b = ((k < 4u ? raw.x : raw.y) >> (8u * (k % 4u))) & 0xFFu, p = bytes - 1u - k;
    if (p < 4u) v.x |= b << (8u * p);
    else v.y |= b << (8u * (p - 4u));
  }
  return v;
}

// The ordered bits of a field of `bytes` bytes and KEY_KIND-style `kind` (keys.h), and back.
uvec2 ordered_of(uvec2 v, uint bytes, uint kind, bool back) {
  const uint bits = 8u * bytes;
  const uvec2 sign = bits == 64u ? uvec2(0u, 0x80000000u) : uvec2(1u << (bits - 1u), 0u);
  const uvec2 all = bits == 64u ? uvec2(~0u) : bits == 32u ? uvec2(~0u, 0u) : uvec2((1u << bits) - 1u, 0u);
  if (kind == 1u) return v ^ sign;                        // signed: the sign bit flipped
  if (kind != 2u) return v;                               // unsigned: as it is
  // floats: negatives (sign set before ordering, clear after) have every bit flipped
  const bool negative = back ? (v & sign) == uvec2(0u) : (v & sign) != uvec2(0u);
  return negative ? (~v & all) : (v ^ sign);
}

void store_byte(uint at, uint b) {
  const uint shift = 8u * (at % 4u);
  WordArray records = WordArray(pc.records);
  atomicAnd(records.words[at / 4u], ~(0xFFu << shift)); // (neighbouring keys share words)
  atomicOr(records.words[at / 4u], b << shift);
}

void main() {
  const uint group = linear_group_index();
  if (group >= pc.groups) return;
  const uint i = group * WORKGROUP_SIZE + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const uint at = i * pc.record_bytes + pc.key_offset;
  if (pc.form != 0u) {
    const uint bytes = pc.form & GS_FORM_BYTES_MASK, kind = pc.form >> GS_FORM_KIND_SHIFT;
    const bool big_endian = (pc.form & GS_FORM_BIG_ENDIAN) != 0u;
    if ((pc.flags & GS_EXTRACT_STORE) == 0u) {
      const uvec2 o = ordered_of(field_bits(at, bytes, big_endian), bytes, kind, false);
#if KEY_BITS == 64
      KeyArray(pc.keys).keys[i] = uint64_t(o.x) | (uint64_t(o.y) << 32);
#else
      KeyArray(pc.keys).keys[i] = o.x;
#endif
      return;
    }
    const key_t k = KeyArray(pc.keys).keys[i];
#if KEY_BITS == 64
    const uvec2 o = uvec2(uint(k), uint(k >> 32));
#else
    const uvec2 o = uvec2(k, 0u);
#endif
    const uvec2 v = ordered_of(o, bytes, kind, true);
    for (uint k2 = 0u; k2 < bytes; k2++) {
      const uint p = big_endian ? bytes - 1u - k2 : k2; // byte p of the number goes to byte k2
      store_byte(at + k2, ((p < 4u ? v.x : v.y) >> (8u * (p % 4u))) & 0xFFu);
    }
    return;
  }
#if KEY_BITS == 64
  KeyArray(pc.keys).keys[i] = uint64_t(word_at_byte(at)) | (uint64_t(word_at_byte(at + 4u)) << 32);
#else
  KeyArray(pc.keys).keys[i] = word_at_byte(at);
#endif
}
