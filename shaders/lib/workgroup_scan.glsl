// Workgroup-wide exclusive prefix sum of one value per invocation, from subgroup scans.
// Call from uniform control flow only: it contains barriers.

shared uint s_workgroup_scan[NUM_SUBGROUPS];

uint workgroup_exclusive_add(uint value) {
  const uint within = subgroupExclusiveAdd(value);
  if (gl_SubgroupInvocationID == SUBGROUP_SIZE - 1u) s_workgroup_scan[gl_SubgroupID] = within + value;
  barrier();
  // The first subgroup scans the subgroup totals, SUBGROUP_SIZE at a time.
  if (gl_SubgroupID == 0u) {
    uint carry = 0u;
    for (uint base = 0u; base < NUM_SUBGROUPS; base += SUBGROUP_SIZE) {
      const uint i = base + gl_SubgroupInvocationID;
      const uint total = i < NUM_SUBGROUPS ? s_workgroup_scan[i] : 0u;
      const uint before = subgroupExclusiveAdd(total);
      if (i < NUM_SUBGROUPS) s_workgroup_scan[i] = carry + before;
      carry += subgroupAdd(total);
    }
  }
  barrier();
  const uint result = s_workgroup_scan[gl_SubgroupID] + within;
  barrier(); // the scratch may be reused by the next call
  return result;
}
