/* Records on the GPU: whole records in the order of a sort's indices (the device-side
 * alternative to gathering records with host threads; src/job/sort_engine.c chooses), and
 * the keys of records as an array (for records that live on the GPU). */
#ifndef GS_PRIM_GATHER_H
#define GS_PRIM_GATHER_H

#include "gpusort.h"
#include "prim/keys.h"
#include "vk/commands.h"
#include "vk/kernel.h"

typedef struct {
  gs_device *dev;
  uint32_t workgroup;
  gs_kernel gather, extract[2]; /* extract: [0] 32-bit keys, [1] 64-bit keys */
} gs_gather;

/* Whether n records of this size can be gathered (or their keys extracted) on the device: all
 * of them in one buffer, byte offsets below 2^32. */
bool gs_gather_fits(const gs_device *dev, uint64_t n, unsigned record_bytes);

int gs_gather_create(gs_device *dev, gs_gather *g);
void gs_gather_destroy(gs_gather *g);

/* Records out[i] = in[indices[i]] for i < n (u32 indices). Record buffers are read and
 * written as whole 32-bit words: their sizes round up to a multiple of 4 bytes. */
int gs_gather_record(const gs_gather *g, VkCommandBuffer cb, gs_range indices, gs_range records_in,
                     gs_range records_out, uint64_t n, unsigned record_bytes);

/* Records keys[i] = the key at key_offset of record i, for i < n. */
int gs_extract_keys_record(const gs_gather *g, VkCommandBuffer cb, gs_range records, gs_range keys, uint64_t n,
                           unsigned record_bytes, unsigned key_offset, unsigned key_bytes);

/* The same for a key of another numeric form than the six GPU types (narrow, half, big-endian:
 * `form`): keys[i] is the key's ordered bits, in 32-bit keys (64-bit for 8-byte fields), to be
 * sorted as unsigned. With `store`, the other way: each record's key becomes the field whose
 * ordered bits are keys[i] (sorted keys written back in their own form). */
int gs_extract_form_record(const gs_gather *g, VkCommandBuffer cb, gs_range records, gs_range keys, uint64_t n,
                           unsigned record_bytes, unsigned key_offset, gpusort_type form, bool store);

#endif
