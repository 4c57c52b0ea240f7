#version 460
#extension GL_GOOGLE_include_directive : require
// Reference blocked scans of u32 sums, for the benchmark's comparison: each workgroup scans
// a block in shared memory and writes the block's sum; the sums are scanned the same way,
// recursively; then every element gets its block's offset. By pc.mode:
//   0 block scan: BLOCK_ALGO 0 = Blelloch's up- and down-sweep over 2 * WORKGROUP_SIZE
//     elements in shared memory; 1 = subgroup scans and a scan of the subgroup totals over
//     WORKGROUP_SIZE elements. Writes each block's exclusive scan and its sum.
//   1 add offsets: out[i] = scanned[i] + offsets[block] (+ input[i] when inclusive)
#include "../lib/common.glsl"
#include "../lib/workgroup_scan.glsl"

layout(constant_id = GS_SPEC_TILE_ROWS) const uint BLOCK_ALGO = 0;

layout(push_constant, std430) uniform Push { gs_reference_blocked_push pc; };

const uint BLOCK = BLOCK_ALGO == 0 ? 2u * WORKGROUP_SIZE : WORKGROUP_SIZE;
shared uint s_block[2 * WORKGROUP_SIZE];

void main() {
  const uint block = linear_group_index();
  const uint lid = gl_LocalInvocationID.x;
  WordArray data_in = WordArray(pc.data_in), data_out = WordArray(pc.data_out), sums = WordArray(pc.sums);
  const uint first = block * BLOCK;
  if (first >= pc.n) return;
  if (pc.mode == 1u) {
    for (uint k = lid; k < BLOCK; k += WORKGROUP_SIZE) {
      const uint i = first + k;
      if (i < pc.n)
        data_out.words[i] = data_out.words[i] + (pc.no_offsets != 0u ? 0u : sums.words[block]) + (pc.inclusive != 0u ? data_in.words[i] : 0u);
    }
    return;
  }
  if (BLOCK_ALGO == 0) {
    // Blelloch in shared memory: up-sweep builds partial sums in a tree, down-sweep pushes
    // prefixes back down; O(n) additions, 2 log2(n) barrier steps.
    for (uint k = lid; k < BLOCK; k += WORKGROUP_SIZE) s_block[k] = first + k < pc.n ? data_in.words[first + k] : 0u;
    uint offset = 1u;
    for (uint d = BLOCK >> 1; d > 0u; d >>= 1) {
      barrier();
      if (lid < d) {
        const uint ai = offset * (2u * lid + 1u) - 1u, bi = offset * (2u * lid + 2u) - 1u;
        s_block[bi] += s_block[ai];
      }
      offset <<= 1;
    }
    barrier();
    if (lid == 0u) {
      sums.words[block] = s_block[BLOCK - 1u];
      s_block[BLOCK - 1u] = 0u;
    }
    for (uint d = 1u; d < BLOCK; d <<= 1) {
      offset >>= 1;
      barrier();
      if (lid < d) {
        const uint ai = offset * (2u * lid + 1u) - 1u, bi = offset * (2u * lid + 2u) - 1u;
        const uint t = s_block[ai];
        s_block[ai] = s_block[bi];
        s_block[bi] += t;
      }
    }
    barrier();
    for (uint k = lid; k < BLOCK; k += WORKGROUP_SIZE)
      if (first + k < pc.n) data_out.words[first + k] = s_block[k];
  } else {
    // Subgroup scans, then one scan of the subgroup totals.
    const uint i = first + lid;
    const uint v = i < pc.n ? data_in.words[i] : 0u;
    const uint before = workgroup_exclusive_add(v);
    if (i < pc.n) data_out.words[i] = before;
    if (lid == WORKGROUP_SIZE - 1u) sums.words[block] = before + v;
  }
}
