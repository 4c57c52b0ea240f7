#version 460
// The test application's own consumer of a sorted list, through classic descriptor
// bindings: counts neighbours out of order, equal keys out of input order, and folds the
// keys and values into checksums.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 1) readonly buffer Values { uint values[]; };
layout(std430, binding = 2) buffer Result {
  uint unsorted;
  uint unstable;
  uint key_xor;
  uint value_sum;
} result;
layout(push_constant) uniform Push {
  uint n;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  if (i > 0u) {
    if (keys[i - 1u] > keys[i]) atomicAdd(result.unsorted, 1u);
    if (keys[i - 1u] == keys[i] && values[i - 1u] > values[i]) atomicAdd(result.unstable, 1u);
  }
  atomicXor(result.key_xor, keys[i]);
  atomicAdd(result.value_sum, values[i]);
}
