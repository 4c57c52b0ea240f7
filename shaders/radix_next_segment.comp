#version 460
#extension GL_GOOGLE_include_directive : require
// Between two segments of a segmented digit-binning pass (kernel_interface.h): the segment's
// last tile holds, per digit, the inclusive count of the segment, which moves the digit's
// start past it; and the pass's ticket counter starts again at zero for the next segment.
#include "lib/common.glsl"

layout(push_constant, std430) uniform Push { gs_next_segment_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

void main() {
  WordArray starts = WordArray(pc.digit_starts);
  WordArray last = WordArray(pc.last_tile);
  for (uint d = gl_LocalInvocationID.x; d < RADIX; d += WORKGROUP_SIZE)
    starts.words[d] += atomicLoad(last.words[d], gl_ScopeQueueFamily, 0, 0) & GS_LOOKBACK_COUNT_MASK;
  if (gl_LocalInvocationID.x == 0u) // (a copy pass keeps its marks; it posts nothing, and reads no starts)
    Control(pc.control).control.tickets[pc.pass] &= GS_SORT_COPY_TICKETS | GS_SORT_SKIPPED_TICKETS;
}
