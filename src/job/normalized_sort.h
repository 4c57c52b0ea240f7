/* The order of records whose key is not one of the GPU's six types (narrow, half and
 * big-endian types, byte strings, composite keys): an LSD radix sort of the key's normalized
 * form (prim/key_spec.h), 64 bits at a time.
 *
 * Host threads write each record's normalized form as 64-bit words, one column per word, and
 * note which bits of each word vary at all. The columns go to the GPU once. Then, from the
 * last word to the first, the GPU sorts the word's column with the records' indices on its
 * varying bits only (a word that never varies is skipped): the first round generates the
 * indices, and each later one gathers its word by the order the previous round left. The
 * sort is stable, so after the first word the indices list the records in key order, and only
 * they come back. A 10-byte key whose bytes all vary takes 8 + 2 passes; the 6 bytes of
 * padding of its last word none.
 *
 * Use: gs_normalized_sort_init, then gs_normalized_sort_run per batch, _free. */
#ifndef GS_JOB_NORMALIZED_SORT_H
#define GS_JOB_NORMALIZED_SORT_H

#include "io/layout.h"
#include "io/transfer.h"
#include "job/context.h"
#include "util/pages.h"

enum { GS_NORMALIZED_MAX_WORDS = GS_KEY_SPEC_MAX_BYTES / 8 };

/* The normalized forms of n records, computed on the host: one column of 64-bit words per
 * word of the form (word w of record i at columns[w * n + i]), and the bits of each word that
 * differ between records. They do not need the device, so a file job computes them while the
 * device opens. */
typedef struct gs_normalized_forms {
  uint64_t *columns;        /* in `pages`, which the device may import to read them in place */
  gs_pages pages;
  uint64_t n;
  unsigned words;
  uint64_t varying[GS_NORMALIZED_MAX_WORDS];
  double seconds;
} gs_normalized_forms;

/* Host memory the normalized forms of n records take. */
uint64_t gs_normalized_forms_bytes(const gs_layout *layout, uint64_t n);

int gs_normalized_forms_compute(gs_normalized_forms *f, const gs_layout *layout, bool descending,
                                const unsigned char *records, uint64_t n);
void gs_normalized_forms_free(gs_normalized_forms *f);

typedef struct gs_normalized_sort {
  gs_context *ctx;
  gs_key_spec spec;
  bool descending;
  unsigned record_bytes;
  unsigned words;           /* of the normalized form */
  uint64_t capacity;
  gs_radix_sort *sorter;    /* u64 keys, u32 indices */
  gs_sort_pacing pacing;
  gs_buffer columns;        /* words x capacity u64: word w of record i at [w * capacity + i] */
  gs_buffer gathered, keys_tmp, order[2], state;
  gs_radix_sort_rest rest; /* what the state block holds for the next round's sort */
  gs_stager staging;        /* both ways, where the device cannot import host memory */
  gs_submitter submitter;
  gs_normalized_forms forms; /* of the last run, unless they were given */
  uint32_t *order_host;     /* capacity: the records' indices in key order, after a run */
  gs_pages order_pages;     /* order_host's memory */
  gs_buffer order_import;   /* order_host imported: the GPU writes the order there itself */
  const gs_normalized_forms *ahead; /* forms given to init, imported meanwhile: */
  gs_buffer forms_import;   /* until the run that reads them */
  unsigned rounds, passes;  /* of the last run */
  unsigned round_passes[GS_KEY_SPEC_MAX_BYTES / 8];
  gs_radix_sort_times gpu;  /* of the last run, its rounds together */
  /* summed over runs until the caller takes them */
  double setup_seconds, normalize_seconds, upload_seconds, upload_host_seconds, sort_seconds, download_seconds,
      download_host_seconds;
} gs_normalized_sort;

/* The most records one sort takes on the context's device, and the memory (device and
 * staging) it needs for `capacity` of them. */
uint64_t gs_normalized_sort_max_records(gs_context *ctx, gs_sort_algo algo);
uint64_t gs_normalized_sort_bytes(gs_context *ctx, const gs_layout *layout, gs_sort_algo algo, uint64_t capacity);

/* algo: the algorithm asked for (GS_SORT_AUTO: as the device and capacity suit). ahead: the
 * forms the first run will be given, or NULL. */
int gs_normalized_sort_init(gs_normalized_sort *s, gs_context *ctx, const gs_layout *layout, bool descending,
                            gs_sort_algo algo, uint64_t capacity, const gs_normalized_forms *ahead);

/* Orders the n records (n <= capacity): s->order_host lists their indices in key order,
 * stably. `forms`: the records' normalized forms computed ahead, or NULL. */
int gs_normalized_sort_run(gs_normalized_sort *s, const unsigned char *records, uint64_t n,
                           const gs_normalized_forms *forms);

void gs_normalized_sort_free(gs_normalized_sort *s);

#endif
