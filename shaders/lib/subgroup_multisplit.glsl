// Subgroup multisplit: which invocations of the subgroup hold the same digit.
//
// One ballot per digit bit narrows the active invocations down to those that agree with
// this one on every bit (the warp-level multisplit of GPU radix sorts). Ballots are uvec4
// (up to 128 lanes); subgroups of 32 or fewer need only the first word.
// All RADIX_BITS bits are voted on, also for a narrower digit: its upper bits are zero in
// every invocation, so those votes keep every peer. (Skipping them behind a test of the
// digit's width made NVIDIA's compiler predicate every vote and keep masks live across the
// ranking.) Every lane takes part: pipelines require full subgroups (src/vk/kernel.c) and sort
// workgroups are whole subgroups (src/prim/radix_sort.c), so up to 32 lanes the votes start
// from all of them, not from a ballot. subgroupPartitionNV, one instruction, made the pass
// twice as slow (doc/tuning.md, "Sort: matching digits in a subgroup").

uvec4 subgroup_match_digit(uint digit) {
  if (SUBGROUP_SIZE <= 32) {
    uint peers = ~0u >> (32u - SUBGROUP_SIZE);
    [[unroll]] for (uint b = 0; b < RADIX_BITS; b++) {
      bool set = ((digit >> b) & 1u) != 0u;
      uint vote = subgroupBallot(set).x;
      peers &= set ? vote : ~vote;
    }
    return uvec4(peers, 0u, 0u, 0u);
  }
  uvec4 peers = subgroupBallot(true);
  [[unroll]] for (uint b = 0; b < RADIX_BITS; b++) {
    bool set = ((digit >> b) & 1u) != 0u;
    uvec4 vote = subgroupBallot(set);
    peers &= set ? vote : ~vote;
  }
  return peers;
}
