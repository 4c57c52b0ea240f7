#version 460
#extension GL_GOOGLE_include_directive : require
// Bitonic sort (Batcher 1968) of (ordered key, input index) pairs: the portable sort for
// small inputs and for devices where nothing may wait on another workgroup. Comparing the
// index after the key makes every pair distinct, so the network's result is the stable order.
//
// The network over `padded` elements (a power of two) builds sorted runs of k = 2, 4, ...,
// padded; stage k does compare-exchange steps of distance j = k/2, k/4, ..., 1, element i
// against i + j, ascending where bit k of i is clear. Steps of distance below one block are
// done in shared memory, several per dispatch (GS_BITONIC_BLOCKS: all stages up to the block's
// size; GS_BITONIC_MERGE: the rest of a larger stage); longer ones are one global dispatch
// each (GS_BITONIC_STEP). The last dispatch writes the sorted keys, converted back, and the
// values gathered through the indices (kernel_interface.h, gs_bitonic_push).
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(push_constant, std430) uniform Push { gs_bitonic_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Count { uint count; };

const uint BLOCK = 4u * WORKGROUP_SIZE; // two compare-exchanges per invocation and step
shared key_t s_key[BLOCK];
shared uint s_index[BLOCK];

uint g_n;

key_t compared_bits(key_t k) {
#if KEY_BITS == 64
  return k & (key_t(pc.mask_high) << 32 | key_t(pc.mask_low));
#else
  return k & pc.mask_low;
#endif
}

// Whether (a, ia) comes after (b, ib) in the stable order.
bool after(key_t a, uint ia, key_t b, uint ib) {
  const key_t ca = compared_bits(a), cb = compared_bits(b);
  return ca > cb || (ca == cb && ia > ib);
}

// Element of the whole network held at shared position `local`.
uint global_of(uint local) { return linear_group_index() * BLOCK + local; }

void exchange_shared(uint i, uint l, bool ascending) {
  const key_t a = s_key[i], b = s_key[l];
  const uint ia = s_index[i], ib = s_index[l];
  if (after(a, ia, b, ib) == ascending) {
    s_key[i] = b;
    s_key[l] = a;
    s_index[i] = ib;
    s_index[l] = ia;
  }
}

// Steps of distance j_first down to 1 of stage k, in shared memory.
void merge_shared(uint k, uint j_first) {
  const uint lid = gl_LocalInvocationID.x;
  for (uint j = j_first; j > 0u; j >>= 1u) {
    [[unroll]] for (uint h = 0u; h < 2u; h++) {
      const uint p = lid + h * WORKGROUP_SIZE; // pair number in the block
      const uint i = (p / j) * 2u * j + p % j;
      exchange_shared(i, i + j, (global_of(i) & k) == 0u);
    }
    barrier();
  }
}

void write_result(uint i, key_t ordered, uint index) {
  if (i >= g_n) return; // padding sorts last
  KeysOut(pc.keys_out).keys[i] = key_from_ordered(ordered);
  if (pc.value_words == 0u) return;
  WordArray values = WordArray(pc.values_out);
  if ((pc.flags & GS_SORT_INDEX_VALUES) != 0u) {
    values.words[i * pc.value_words] = index;
    if (pc.value_words == 2u) values.words[i * 2u + 1u] = 0u;
    return;
  }
  WordArray sources = WordArray(pc.values_in);
  for (uint w = 0u; w < pc.value_words; w++)
    values.words[i * pc.value_words + w] = sources.words[index * pc.value_words + w];
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint mode = pc.flags & 3u;
  const bool last = (pc.flags & GS_BITONIC_LAST) != 0u;
  g_n = pc.count.x != 0u || pc.count.y != 0u ? min(Count(pc.count).count, pc.n) : pc.n;
  KeyArray work = KeyArray(pc.work_keys);
  WordArray indices = WordArray(pc.work_indices);

  if (mode == GS_BITONIC_STEP) {
    const uint p = linear_group_index() * WORKGROUP_SIZE + lid;
    if (p >= pc.padded / 2u) return;
    const uint i = (p / pc.j) * 2u * pc.j + p % pc.j, l = i + pc.j;
    const key_t a = work.keys[i], b = work.keys[l];
    const uint ia = indices.words[i], ib = indices.words[l];
    if (after(a, ia, b, ib) == ((i & pc.k) == 0u)) {
      work.keys[i] = b;
      work.keys[l] = a;
      indices.words[i] = ib;
      indices.words[l] = ia;
    }
    return;
  }

  if (linear_group_index() * BLOCK >= pc.padded) return; // surplus workgroup of a folded dispatch
  [[unroll]] for (uint h = 0u; h < 4u; h++) {
    const uint local = lid + h * WORKGROUP_SIZE, i = global_of(local);
    if (mode == GS_BITONIC_BLOCKS) {
      s_key[local] = i < g_n ? key_to_ordered(KeysIn(pc.keys_in).keys[i]) : ORDERED_KEY_MAX;
      s_index[local] = i;
    } else {
      s_key[local] = work.keys[i];
      s_index[local] = indices.words[i];
    }
  }
  barrier();
  if (mode == GS_BITONIC_BLOCKS)
    for (uint k = 2u; k <= BLOCK; k <<= 1u) merge_shared(k, k >> 1u);
  else
    merge_shared(pc.k, BLOCK >> 1u);
  [[unroll]] for (uint h = 0u; h < 4u; h++) {
    const uint local = lid + h * WORKGROUP_SIZE, i = global_of(local);
    if (last) {
      write_result(i, s_key[local], s_index[local]);
    } else {
      work.keys[i] = s_key[local];
      indices.words[i] = s_index[local];
    }
  }
}
