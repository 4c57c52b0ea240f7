#include "io/datagen.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL /* one hash per key: inline libxxhash's XXH3 */
#include <xxhash.h>

#include "util/parallel.h"

static const struct {
  const char *name;
  gs_dist_kind kind;
  bool has_param;
  unsigned default_param;
} dists[] = {
    {"uniform", GS_DIST_UNIFORM, false, 0}, {"sorted", GS_DIST_SORTED, false, 0},
    {"reversed", GS_DIST_REVERSED, false, 0}, {"equal", GS_DIST_EQUAL, false, 0},
    {"few", GS_DIST_FEW, true, 16},         {"entropy", GS_DIST_ENTROPY, true, 2},
    {"lowbits", GS_DIST_LOWBITS, true, 8},  {"highbits", GS_DIST_HIGHBITS, true, 8},
};

const char *gs_dist_names(void) {
  return "uniform, sorted, reversed, equal, few[:K], entropy[:K], lowbits[:B], highbits[:B]";
}

int gs_dist_parse(const char *text, gs_dist *out) {
  const char *colon = strchr(text, ':');
  size_t name_len = colon ? (size_t)(colon - text) : strlen(text);
  for (size_t i = 0; i < sizeof dists / sizeof dists[0]; i++) {
    if (strlen(dists[i].name) != name_len || strncmp(text, dists[i].name, name_len) != 0) continue;
    out->kind = dists[i].kind;
    out->param = dists[i].default_param;
    if (!colon) return 0;
    if (!dists[i].has_param || !colon[1]) return -1;
    char *end;
    unsigned long v = strtoul(colon + 1, &end, 10);
    if (*end || v == 0 || v > 0xFFFFFFFFul) return -1;
    if ((out->kind == GS_DIST_LOWBITS || out->kind == GS_DIST_HIGHBITS) && v > 64) return -1;
    out->param = (unsigned)v;
    return 0;
  }
  return -1;
}

/* Random word number `stream` for key `index`. */
static inline uint64_t random_word(uint64_t seed, uint64_t stream, uint64_t index) {
  return XXH3_64bits_withSeed(&index, sizeof index, seed + stream * 0x9E3779B97F4A7C15ull);
}

typedef struct {
  const gs_key_info *info;
  gs_dist dist;
  uint64_t seed, n, first;
  unsigned char *out;
} gen_job;

static uint64_t ordered_key(const gen_job *job, uint64_t i) {
  const unsigned bits = job->info->bytes * 8;
  const uint64_t all = bits == 64 ? UINT64_MAX : UINT32_MAX;
  const unsigned param = job->dist.param;
  switch (job->dist.kind) {
  case GS_DIST_UNIFORM: return random_word(job->seed, 0, i) & all;
  case GS_DIST_SORTED:
  case GS_DIST_REVERSED: {
    const uint64_t pos = job->dist.kind == GS_DIST_SORTED ? i : job->n - 1 - i;
    __extension__ unsigned __int128 scaled = ((unsigned __int128)pos << bits) / job->n;
    return (uint64_t)scaled & all;
  }
  case GS_DIST_EQUAL: return random_word(job->seed, 0, 0) & all;
  case GS_DIST_FEW: return random_word(job->seed, 1, random_word(job->seed, 0, i) % param) & all;
  case GS_DIST_ENTROPY: {
    uint64_t v = all;
    for (unsigned k = 0; k < param; k++) v &= random_word(job->seed, k, i);
    return v;
  }
  case GS_DIST_LOWBITS: {
    const unsigned b = param < bits ? param : bits;
    const uint64_t mask = b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
    return random_word(job->seed, 0, i) & mask;
  }
  case GS_DIST_HIGHBITS: {
    const unsigned b = param < bits ? param : bits;
    const uint64_t low = bits - b == 64 ? UINT64_MAX : ((uint64_t)1 << (bits - b)) - 1;
    return random_word(job->seed, 0, i) & all & ~low;
  }
  }
  return 0;
}

static void generate_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const gen_job *job = arg;
  const unsigned bytes = job->info->bytes;
  for (size_t i = begin; i < end; i++)
    gs_key_store_bits(bytes, job->out + i * bytes,
                      gs_bits_from_ordered(job->info->kind, bytes, ordered_key(job, job->first + i)));
}

void gs_generate(gs_key_type type, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first, uint64_t count,
                 void *out) {
  gen_job job = {gs_key_info_of(type), dist, seed, n, first, out};
  gs_parallel_for((size_t)count, 1 << 16, generate_range, &job);
}
