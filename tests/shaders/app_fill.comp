#version 460
// The test application's own producer: fills keys (many equal ones) and values (their
// index) through classic descriptor bindings, and writes how many there are into a count
// buffer, as an application producing a variable-length list for an indirect sort would.
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 1) writeonly buffer Values { uint values[]; };
layout(std430, binding = 2) writeonly buffer Count { uint count; };
layout(push_constant) uniform Push {
  uint n;
  uint seed;
  uint key_mask; // fewer distinct keys: equal keys show whether the sort is stable
} pc;

uint hash(uint x) {
  x ^= pc.seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i == 0u) count = pc.n;
  if (i >= pc.n) return;
  keys[i] = hash(i) & pc.key_mask;
  values[i] = i;
}
