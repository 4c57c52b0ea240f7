/* The contract between the host code (C) and the kernels (GLSL), written once: push-constant
 * layouts, flag bits, specialization-constant ids and the layout of the indirect sort's
 * control block. Included by src/ (C) and by shaders/lib/common.glsl (GLSL, which defines
 * GS_GLSL first).
 *
 * Kernels reach every buffer through a device address in their push constants (Vulkan 1.3's
 * buffer device addresses), so they bind no descriptors: a sort or scan can be recorded on any
 * buffers of a caller's device without allocating anything per call. Addresses come first in
 * each block (8-byte aligned in both languages), then 32-bit fields. */
#ifndef GS_KERNEL_INTERFACE_H
#define GS_KERNEL_INTERFACE_H

#ifdef GS_GLSL
#define GS_ADDRESS uvec2 /* GL_EXT_buffer_reference_uvec2: no 64-bit integers needed */
#define GS_U32 uint
#define GS_BLOCK_BEGIN(name) struct name {
#define GS_BLOCK_END(name) };
#else
#include <stdint.h>
#define GS_ADDRESS uint64_t /* VkDeviceAddress */
#define GS_U32 uint32_t
#define GS_BLOCK_BEGIN(name) typedef struct name {
#define GS_BLOCK_END(name) } name;
#endif

/* Specialization constants. 0 and 1 are set for every kernel by src/vk/kernel.c. */
#define GS_SPEC_WORKGROUP_SIZE 0
#define GS_SPEC_SUBGROUP_SIZE 1
#define GS_SPEC_KEY_KIND 2       /* 0 unsigned, 1 signed, 2 float (src/prim/keys.h) */
#define GS_SPEC_KEY_DESCENDING 3
#define GS_SPEC_TILE_ROWS 4      /* sort: keys per invocation; scan: rows; reference: algorithm */
#define GS_SPEC_LOOKBACK_SPIN 5  /* polls of an empty descriptor before the fallback */
#define GS_SPEC_SCAN_OP 6        /* 0 sum, 1 min, 2 max */
#define GS_SPEC_SCAN_IN_KIND 7
#define GS_SPEC_SCAN_ACC_KIND 8
#define GS_SPEC_SCAN_INCLUSIVE 9
#define GS_SPEC_SEGMENTED 10     /* sort: a pass over one segment of a sort too large for one */
#define GS_SPEC_REDUCE_THEN_SCAN 11 /* sort: tiles find their offsets in a scanned table, not by look-back */
#define GS_SPEC_COMPACT_MODE 12  /* compact.comp: GS_COMPACT_SELECT ... */
#define GS_SPEC_HOLD_KEYS 13     /* sort: keys wait in shared memory while they are ranked */
#define GS_SPEC_COMPACT_SUBTILES 14 /* compact.comp: sub-tiles staged per look-back */
#define GS_SPEC_EARLY_COUNTS 15  /* sort: a tile's digit counts are published before its keys are ranked */
#define GS_SPEC_READ_AHEAD 16     /* tiles ahead of its own that a tile reads the input into cache
                                  * (0: none): compact.comp's select and partition before the
                                  * look-back, the look-back scan's early walk as it walks */
#define GS_SPEC_EARLY_WALK 17    /* subgroup 0 walks the look-back while the others load (1):
                                  * compact.comp's unique, rle and reduce-by-key, the look-back scan */
#define GS_SPEC_PASS_MAPS 18     /* sort: the passes whose key maps a pipeline applies (GS_SORT_MAPS_*) */
#define GS_SPEC_SUBGROUP_WALK 19 /* compact.comp: subgroup 0 walks for a tile's count while the rest
                                  * wait (1), instead of the whole workgroup (0) */
#define GS_SPEC_COUNT 20
#define GS_SORT_MAPS_BY_FLAGS 0  /* in on GS_SORT_FIRST_PASS, out on GS_SORT_LAST_PASS */
#define GS_SORT_MAPS_IN 1        /* always in, never out: a first pass that is not the last */
#define GS_SORT_MAPS_OUT 2       /* always out, never in: a last pass that is not the first */

/* Look-back descriptors of the sort hold a 2-bit status and a 30-bit count (lib/lookback.glsl). */
#define GS_LOOKBACK_COUNT_MASK 0x3FFFFFFFu

#define GS_RADIX_BITS 8
#define GS_RADIX 256
#define GS_RADIX_MAX_PASSES 8

/* Flags shared by the sort kernels. */
#define GS_SORT_FIRST_PASS 1u   /* keys arrive as stored: map them to ordered keys */
#define GS_SORT_LAST_PASS 2u    /* write keys back as stored */
#define GS_SORT_INDEX_VALUES 4u /* first pass: each value is its key's input index */
#define GS_SORT_INDIRECT 8u     /* n and tile counts come from the control block, not pc */
#define GS_SORT_CLEAR_NEXT 16u  /* each tile zeroes its row of lookback_next for the next pass */
/* The histogram kernel, on kept state (no clear before the sort): it first zeroes the tickets, the
 * other half's histograms and the first pass's descriptors (src/prim/radix_sort.h's
 * gs_radix_sort_rest). */
#define GS_SORT_ZERO_STATE 32u
/* Whether a digit-binning pass stages its keys for the write-out a 32-bit half at a time
 * (radix_onesweep.comp): 64-bit keys alone, not held while ranked. Its staged tile then takes
 * 4 bytes a key, which the host's tile choice must fit. */
#define GS_SORT_STAGES_HALVES(key_bytes, value_bytes, hold_keys) ((key_bytes) == 8 && (value_bytes) == 0 && !(hold_keys))
/* Set in a pass's ticket counter before the pass when every key has the same digit in it: the
 * pass copies the keys (radix_scan_histograms.comp, radix_onesweep.comp). */
#define GS_SORT_COPY_TICKETS 0x80000000u
/* Set as well in each of two copy passes in a row, which would copy the keys from one array to
 * the other and back: both are skipped (radix_scan_histograms.comp has the rule). */
#define GS_SORT_SKIPPED_TICKETS 0x40000000u

/* radix_histogram.comp: every digit's histogram in one read of the keys. */
GS_BLOCK_BEGIN(gs_histogram_push)
  GS_ADDRESS keys;
  GS_ADDRESS histograms; /* [pass][GS_RADIX] u32, zeroed */
  GS_ADDRESS control;    /* gs_sort_control: n with GS_SORT_INDIRECT, tickets with GS_SORT_ZERO_STATE */
  GS_ADDRESS other_histograms; /* GS_SORT_ZERO_STATE: [GS_RADIX_MAX_PASSES][GS_RADIX], zeroed for the next sort */
  GS_ADDRESS lookback;   /* GS_SORT_ZERO_STATE: the first pass's descriptors, lookback_words of them zeroed */
  GS_U32 n;
  GS_U32 passes;
  GS_U32 first_shift; /* bit offset of the first digit */
  GS_U32 last_bits;   /* width of the last digit, 1..8; the others are 8 wide */
  GS_U32 groups;      /* workgroups sharing the keys */
  GS_U32 flags;
  GS_U32 lookback_words;
  GS_U32 pad0;
GS_BLOCK_END(gs_histogram_push)

/* radix_scan_histograms.comp: one workgroup per digit position (a dispatch limit of fewer
 * workgroups a dimension than passes folds them into rows). */
GS_BLOCK_BEGIN(gs_scan_histograms_push)
  GS_ADDRESS histograms;
  GS_ADDRESS control; /* gs_sort_control: the tickets of copy passes */
  GS_U32 passes;
GS_BLOCK_END(gs_scan_histograms_push)

/* radix_onesweep.comp: one digit-binning pass.
 *
 * A sort of more keys than one pass's look-back can count (or than one submission should
 * hold) runs each pass as a series of dispatches over consecutive segments, with the
 * GS_SPEC_SEGMENTED pipeline: keys_in, values_in, lookback and lookback_next then point at the
 * segment's first key and first tile, n and tiles are the segment's, look-back counts start
 * from zero at the segment, and the digit starts (which radix_next_segment advances past each
 * segment) are added afterwards; outputs are addressed with 64-bit offsets from keys_out and
 * values_out, which are the whole arrays.
 *
 * The GS_SPEC_REDUCE_THEN_SCAN pipelines (and radix_upsweep.comp, with the same push
 * constants) run a pass in three steps that never wait on another workgroup: the upsweep
 * writes each tile's digit counts to a table whose row d holds digit d's count for every
 * tile (`lookback`, rows `tile_stride` words apart); an exclusive scan of the whole table in
 * row order gives every (digit, tile) its first output position; the digit-binning pass then
 * reads that position from the scanned table (`digit_starts`, laid out the same) instead of
 * looking back. Tiles are the workgroup's index in the dispatch, not a ticket. */
GS_BLOCK_BEGIN(gs_onesweep_push)
  GS_ADDRESS keys_in;
  GS_ADDRESS keys_out;
  GS_ADDRESS values_in;
  GS_ADDRESS values_out;
  GS_ADDRESS digit_starts; /* [pass][GS_RADIX]: the scanned histograms */
  GS_ADDRESS lookback;     /* [tile][GS_RADIX] descriptors, zeroed */
  GS_ADDRESS lookback_next; /* the next pass's descriptors, zeroed by this pass (GS_SORT_CLEAR_NEXT) */
  GS_ADDRESS control;      /* gs_sort_control: tickets, and with GS_SORT_INDIRECT n and tiles */
  GS_U32 n;
  GS_U32 tiles;
  GS_U32 shift; /* bit offset of this pass's digit */
  GS_U32 bits;  /* digit width, 1..8 */
  GS_U32 pass;  /* selects the ticket counter and the digit starts */
  GS_U32 flags;
  GS_U32 index_base; /* GS_SORT_INDEX_VALUES: the input index of keys_in's first key */
  GS_U32 tile_stride; /* reduce-then-scan: words between one digit's row of the tile table and the next */
GS_BLOCK_END(gs_onesweep_push)

/* radix_next_segment.comp: between two segments of a pass, adds the counts of the segment
 * just done (its last tile's inclusive descriptors) to the pass's digit starts and resets the
 * pass's ticket counter. One workgroup. */
GS_BLOCK_BEGIN(gs_next_segment_push)
  GS_ADDRESS digit_starts; /* this pass's row of GS_RADIX */
  GS_ADDRESS last_tile;    /* the segment's last tile's row of look-back descriptors */
  GS_ADDRESS control;
  GS_U32 pass;
  GS_U32 pad0;
GS_BLOCK_END(gs_next_segment_push)

/* The sort's control block in scratch memory: tile tickets (with GS_SORT_COPY_TICKETS in a copy
 * pass's, and GS_SORT_SKIPPED_TICKETS in a skipped one's), and for an indirect sort the count read from the caller's buffer with every
 * dispatch size derived from it on the GPU. */
GS_BLOCK_BEGIN(gs_sort_control)
  GS_U32 tickets[GS_RADIX_MAX_PASSES];
  GS_U32 n;     /* min(caller's count, the capacity) */
  GS_U32 tiles; /* digit-binning tiles of n keys */
  GS_U32 histogram_groups;
  GS_U32 histogram_dispatch[3]; /* VkDispatchIndirectCommand */
  GS_U32 onesweep_dispatch[3];
GS_BLOCK_END(gs_sort_control)

/* radix_prepare_indirect.comp: one invocation fills the control block from the count. */
GS_BLOCK_BEGIN(gs_prepare_indirect_push)
  GS_ADDRESS count; /* the caller's u32 */
  GS_ADDRESS control;
  GS_U32 max_n;
  GS_U32 tile_keys;
  GS_U32 histogram_keys_per_group; /* at least; groups are capped */
  GS_U32 histogram_max_groups;
  GS_U32 max_groups_x; /* dispatches beyond it are folded into x * y */
GS_BLOCK_END(gs_prepare_indirect_push)

/* scan_tiles.comp. A scan of an array too large for one scan runs in chunks: each chunk's
 * first prefix is the accumulator value at carry_in (the combination of every earlier chunk),
 * and its last tile writes the combination of that and the whole chunk to carry_out. */
#define GS_SCAN_TILE_NO_PREFIX 1u /* downsweep of a single tile: the prefix is the identity */
#define GS_SCAN_CARRY_IN 2u       /* the first tile's prefix is carry_in (with NO_PREFIX: the prefix) */
#define GS_SCAN_CARRY_OUT 4u      /* the last tile writes prefix + aggregate to carry_out */
GS_BLOCK_BEGIN(gs_scan_push)
  GS_ADDRESS elements; /* the input */
  GS_ADDRESS results;  /* the output */
  GS_ADDRESS control;   /* the look-back's control words (scan_tiles.comp's ScanControl) */
  GS_ADDRESS tile_data; /* look-back descriptors, or reduce-then-scan tile values */
  GS_ADDRESS carry_in;  /* one accumulator value */
  GS_ADDRESS carry_out;
  GS_U32 n;
  GS_U32 tiles;
  GS_U32 flags;
  GS_U32 capacity; /* look-back: the descriptors the state holds (at least `tiles`) */
GS_BLOCK_END(gs_scan_push)

/* compact.comp: the look-back family. One pass over n keys in tiles; each tile takes a ticket,
 * posts how many of its keys it keeps (lib/lookback.glsl's descriptors, one per tile), looks
 * back for the number kept before it, and writes what it keeps there:
 *   SELECT      keys satisfying the predicate (`program`, below);
 *   PARTITION   as SELECT, and the others from the end of the output backwards (so the
 *               rejected keys stand in reverse input order after the kept ones; the caller
 *               reverses them when it copies them out);
 *   UNIQUE      the first key of each run of equal keys (equal stored bits);
 *   REDUCE_BY_KEY as UNIQUE, and each run's values (values_in, IN_BITS wide) combined into
 *               values_out; runs that cross tiles combine through a second look-back, on the
 *               scan's descriptors (lib/scan_lookback.glsl), of the values since each tile's
 *               last run head (a tile holding a head posts it as inclusive at once).
 * Kept keys go to keys_out (GS_COMPACT_KEYS) and their input indices to indices_out
 * (GS_COMPACT_INDICES: the records to gather, or a run's first position, which gives RLE its
 * counts). The last tile writes the total kept to count_out. With GS_COMPACT_PREVIOUS the key
 * before keys_in's first is (prev_lo, prev_hi), for a chunk that continues an earlier one. */
#define GS_COMPACT_SELECT 0u
#define GS_COMPACT_PARTITION 1u
#define GS_COMPACT_UNIQUE 2u
#define GS_COMPACT_REDUCE_BY_KEY 3u
/* Modes whose tiles wait in shared memory in output order during the look-back (written out
 * contiguously after it): TILE x key words of it, which the host's tile choice must fit. */
#define GS_COMPACT_STAGES(mode) ((mode) == GS_COMPACT_SELECT || (mode) == GS_COMPACT_PARTITION)
#define GS_COMPACT_KEYS 1u
#define GS_COMPACT_INDICES 8u   /* (bit 2 is GS_SCAN_CARRY_IN, which lib/scan_lookback.glsl reads) */
#define GS_COMPACT_PREVIOUS 16u
#define GS_COMPACT_COUNT_RUNS 32u /* reduce-by-key of ones, not of values_in: each run's length */
#define GS_COMPACT_CARRY 64u      /* not reduce-by-key: indices_out receives each kept key's value
                                     (values_in's words at its position) instead of its position */
#define GS_COMPACT_CARRY_WIDE 128u /* with CARRY: values of two words */
#define GS_COMPACT_ALIGNED 256u   /* keys_in is 16-byte aligned: keys are read 16 bytes at a time */
#define GS_COMPACT_VALUES_ALIGNED 512u /* reduce-by-key: values_in is 16-byte aligned: a row's
                                          values are read in 8- or 16-byte loads */
GS_BLOCK_BEGIN(gs_compact_push)
  GS_ADDRESS keys_in;
  GS_ADDRESS keys_out;
  GS_ADDRESS indices_out;  /* u32 */
  GS_ADDRESS values_in;    /* reduce-by-key; GS_COMPACT_CARRY: the values carried */
  GS_ADDRESS values_out;   /* reduce-by-key: accumulator-typed */
  GS_ADDRESS lookback;     /* [tile] count descriptors (lib/lookback.glsl) */
  GS_ADDRESS tile_data;    /* reduce-by-key: the value descriptors (lib/scan_lookback.glsl) */
  GS_ADDRESS control;      /* u32 ticket counter, then the u32 total written by the last tile */
  GS_ADDRESS program;      /* select, partition: gs_predicate_op[program_length] */
  GS_ADDRESS carry_in;     /* unused (lib/scan_lookback.glsl's name for a carry) */
  GS_ADDRESS next_lookback; /* 0, or the count descriptors of the state's other half, the next
                               pass's (src/prim/compact.c): each tile zeroes its count (and value)
                               descriptor there, and the dispatch's last workgroup the tickets */
  GS_U32 n;
  GS_U32 tiles;
  GS_U32 flags;
  GS_U32 program_length;
  GS_U32 prev_lo;
  GS_U32 prev_hi;
GS_BLOCK_END(gs_compact_push)

/* A predicate on a key, as a postfix program: each test pushes one truth value, AND and OR
 * replace the top two with one, NOT negates the top; the key is kept if the one value left
 * is true. Comparisons and ranges take constants as ordered bits (src/prim/keys.h) of the
 * key with -0.0 taken as +0.0, so that for floats they follow IEEE comparison; a NaN key
 * satisfies only NE. MASK_EQ and MASK_NE test the stored bits: (key & a) == b. */
#define GS_PREDICATE_MAX_OPS 64
#define GS_PRED_LT 1u      /* key < a */
#define GS_PRED_LE 2u
#define GS_PRED_GT 3u
#define GS_PRED_GE 4u
#define GS_PRED_EQ 5u
#define GS_PRED_NE 6u
#define GS_PRED_RANGE 7u   /* a <= key < b */
#define GS_PRED_ISNAN 8u   /* false for integer keys */
#define GS_PRED_NOTNAN 9u  /* true for integer keys */
#define GS_PRED_MASK_EQ 10u
#define GS_PRED_MASK_NE 11u
#define GS_PRED_AND 12u
#define GS_PRED_OR 13u
#define GS_PRED_NOT 14u
GS_BLOCK_BEGIN(gs_predicate_op)
  GS_U32 code;
  GS_U32 pad0;
  GS_U32 a_lo; /* a, b: 64-bit constants in two words (32-bit keys use the low ones) */
  GS_U32 a_hi;
  GS_U32 b_lo;
  GS_U32 b_hi;
GS_BLOCK_END(gs_predicate_op)

/* bitonic_sort.comp: the steps of a bitonic sort of `padded` (a power of two, at least one
 * block) (ordered key, input index) pairs in the work arrays. Modes: GS_BITONIC_BLOCKS sorts
 * each block in shared memory, reading the keys from keys_in (positions past n hold the
 * largest key); GS_BITONIC_STEP is one compare-exchange step of distance j of stage k in
 * global memory; GS_BITONIC_MERGE does the steps of stage k below one block's size in shared
 * memory. With GS_BITONIC_LAST the step's result goes to keys_out (and values_out: values_in
 * gathered through the indices, or the indices themselves) instead of the work arrays. */
#define GS_BITONIC_BLOCKS 0u
#define GS_BITONIC_STEP 1u
#define GS_BITONIC_MERGE 2u
#define GS_BITONIC_LAST 32u
GS_BLOCK_BEGIN(gs_bitonic_push)
  GS_ADDRESS keys_in;
  GS_ADDRESS keys_out;
  GS_ADDRESS values_in;
  GS_ADDRESS values_out;
  GS_ADDRESS work_keys;    /* [padded] ordered keys */
  GS_ADDRESS work_indices; /* [padded] u32 input indices */
  GS_ADDRESS count;        /* an indirect sort's u32 count (n is then its capacity); 0: none */
  GS_U32 n;
  GS_U32 padded;
  GS_U32 k;          /* stage: sorted runs of k are being built */
  GS_U32 j;          /* GS_BITONIC_STEP: compare-exchange distance */
  GS_U32 flags;      /* mode | GS_BITONIC_LAST | GS_SORT_INDEX_VALUES */
  GS_U32 value_words; /* 0, 1 or 2 */
  GS_U32 mask_low;   /* the ordered-key bits compared (a bit range), low and high words */
  GS_U32 mask_high;
GS_BLOCK_END(gs_bitonic_push)

/* gather_records.comp: out[i] = in[indices[i]], records of any size. */
GS_BLOCK_BEGIN(gs_gather_push)
  GS_ADDRESS indices; /* u32 */
  GS_ADDRESS records_in;
  GS_ADDRESS records_out;
  GS_U32 n;
  GS_U32 record_bytes;
  GS_U32 groups;
GS_BLOCK_END(gs_gather_push)

/* extract_keys.comp: keys[i] = the key at key_offset in record i (any alignment). With a
 * `form` (a key of another form than the GPU types: its bytes, 1 to 8, | GS_FORM_BIG_ENDIAN |
 * kind << GS_FORM_KIND_SHIFT, kind as KEY_KIND), keys[i] is the key's ordered bits
 * (prim/keys.h), zero-extended, for an unsigned sort; with GS_EXTRACT_STORE, the other way:
 * the key at key_offset in record i becomes the field whose ordered bits are keys[i]. */
#define GS_FORM_BYTES_MASK 15u
#define GS_FORM_BIG_ENDIAN 16u
#define GS_FORM_KIND_SHIFT 5u
#define GS_EXTRACT_STORE 1u
GS_BLOCK_BEGIN(gs_extract_push)
  GS_ADDRESS records;
  GS_ADDRESS keys;
  GS_U32 n;
  GS_U32 record_bytes;
  GS_U32 key_offset;
  GS_U32 groups;
  GS_U32 form;  /* 0: a GPU type, copied as it is */
  GS_U32 flags; /* GS_EXTRACT_STORE */
GS_BLOCK_END(gs_extract_push)

/* clear_words.comp and copy_words.comp: `words` 32-bit words, 16 bytes per access. With
 * GS_WORDS_FROM_MEMORY the count is the u32 at `count` times `words` (an indirect sort's
 * counts; such dispatches are sized for the capacity and surplus groups do nothing). */
#define GS_WORDS_FROM_MEMORY 1u
GS_BLOCK_BEGIN(gs_words_push)
  GS_ADDRESS source; /* copy only */
  GS_ADDRESS destination;
  GS_ADDRESS count;
  GS_U32 words;
  GS_U32 flags;
GS_BLOCK_END(gs_words_push)

/* reference/scan_global.comp (textbook scans for the benchmark). */
GS_BLOCK_BEGIN(gs_reference_global_push)
  GS_ADDRESS a;
  GS_ADDRESS b;
  GS_ADDRESS c;
  GS_U32 count;
  GS_U32 offset;
  GS_U32 mode;
  GS_U32 last;
GS_BLOCK_END(gs_reference_global_push)

/* reference/scan_blocked.comp. */
GS_BLOCK_BEGIN(gs_reference_blocked_push)
  GS_ADDRESS data_in;
  GS_ADDRESS data_out;
  GS_ADDRESS sums;
  GS_U32 n;
  GS_U32 mode;
  GS_U32 inclusive;
  GS_U32 no_offsets;
GS_BLOCK_END(gs_reference_blocked_push)

#ifndef GS_GLSL
/* Every device offers 128 bytes of push constants (src/vk/device.c refuses others). */
#define GS_PUSH_FITS(type) _Static_assert(sizeof(type) <= 128, #type " exceeds 128 bytes of push constants")
GS_PUSH_FITS(gs_histogram_push);
GS_PUSH_FITS(gs_onesweep_push);
GS_PUSH_FITS(gs_next_segment_push);
GS_PUSH_FITS(gs_prepare_indirect_push);
GS_PUSH_FITS(gs_scan_push);
GS_PUSH_FITS(gs_gather_push);
GS_PUSH_FITS(gs_bitonic_push);
GS_PUSH_FITS(gs_compact_push);
GS_PUSH_FITS(gs_extract_push);
GS_PUSH_FITS(gs_words_push);
GS_PUSH_FITS(gs_reference_global_push);
GS_PUSH_FITS(gs_reference_blocked_push);
#endif

#endif
