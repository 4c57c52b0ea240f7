#include "io/datagen.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL /* one hash per key: inline libxxhash's XXH3 */
#include <xxhash.h>

#include "prim/elements.h"
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
    {"special", GS_DIST_SPECIAL, false, 0},
};

const char *gs_dist_names(void) {
  return "uniform, sorted, reversed, equal, few[:K], entropy[:K], lowbits[:B], highbits[:B], special";
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
  size_t stride;
} gen_job;

/* Raw bits of the type's edge values. */
static const uint32_t f32_specials[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000,             /* +-0, +-inf */
    0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, /* NaNs: quiet, signalling, */
    0xffffffff, 0x7fc00001, 0xffc12345,                         /* payloads, both signs */
    0x00000001, 0x80000001, 0x007fffff, 0x807fffff,             /* denormals */
    0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,             /* smallest normal, largest finite */
    0x3f800000, 0xbf800000};                                    /* +-1 */
static const uint64_t f64_specials[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
    0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull, 0xfff0000000000001ull,
    0x7fffffffffffffffull, 0xffffffffffffffffull, 0x7ff8000000000001ull, 0xfff8000012345678ull,
    0x0000000000000001ull, 0x8000000000000001ull, 0x000fffffffffffffull, 0x800fffffffffffffull,
    0x0010000000000000ull, 0x8010000000000000ull, 0x7fefffffffffffffull, 0xffefffffffffffffull,
    0x3ff0000000000000ull, 0xbff0000000000000ull};

/* Ordered bits of a special-distribution key: every other key an edge value, the rest
 * ordinary (finite floats of moderate size; any integer). */
static uint64_t special_key(const gs_key_info *info, uint64_t r) {
  const unsigned bits = info->bytes * 8;
  const uint64_t all = bits == 64 ? UINT64_MAX : UINT32_MAX;
  uint64_t raw;
  if (info->kind == GS_KEY_KIND_FLOAT) {
    const size_t count = bits == 64 ? sizeof f64_specials / 8 : sizeof f32_specials / 4;
    if (r & 1) {
      raw = bits == 64 ? f64_specials[(r >> 1) % count] : f32_specials[(r >> 1) % count];
    } else if (bits == 64) {
      double d = (double)(int64_t)(r >> 11) / (double)(1ull << 40);
      memcpy(&raw, &d, 8);
    } else {
      float f = (float)(int32_t)(r >> 32) / 65536.0f;
      uint32_t b;
      memcpy(&b, &f, 4);
      raw = b;
    }
    return gs_ordered_from_bits(info->kind, info->bytes, raw);
  }
  /* integers: in ordered bits the extremes are 0 and all ones, zero is the sign bit */
  const uint64_t sign = (uint64_t)1 << (bits - 1);
  const uint64_t edges[] = {0, 1, all, all - 1, sign, sign - 1, sign + 1, 2};
  if (r & 1) return edges[(r >> 1) % 8];
  return (r >> 1) & all;
}

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
  case GS_DIST_SPECIAL: return special_key(job->info, random_word(job->seed, 0, i));
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
    gs_key_store_bits(bytes, job->out + i * job->stride,
                      gs_bits_from_ordered(job->info->kind, bytes, ordered_key(job, job->first + i)));
}

void gs_generate(gs_key_type type, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first, uint64_t count,
                 void *out, size_t stride) {
  gen_job job = {gs_key_info_of(type), dist, seed, n, first, out, stride};
  gs_parallel_for((size_t)count, 1 << 16, generate_range, &job);
}

typedef struct {
  uint64_t seed, first;
  size_t record_bytes;
  unsigned char *out;
} bytes_job;

static void bytes_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const bytes_job *job = arg;
  for (size_t i = begin; i < end; i++) {
    unsigned char *record = job->out + i * job->record_bytes;
    for (size_t b = 0; b < job->record_bytes; b += 8) {
      const uint64_t r = random_word(job->seed, 2 + b / 8, job->first + i);
      memcpy(record + b, &r, job->record_bytes - b < 8 ? job->record_bytes - b : 8);
    }
  }
}

void gs_generate_bytes(uint64_t seed, uint64_t first, uint64_t count, size_t record_bytes, void *out) {
  bytes_job job = {seed, first, record_bytes, out};
  gs_parallel_for((size_t)count, 1 << 14, bytes_range, &job);
}

void gs_generate_index_values(gs_key_type type, uint64_t first, uint64_t count, void *out, size_t stride) {
  const gs_key_info *info = gs_key_info_of(type);
  unsigned char *p = out;
  for (uint64_t i = 0; i < count; i++) {
    const uint64_t index = first + i;
    uint64_t bits = index;
    if (info->kind == GS_KEY_KIND_FLOAT && info->bytes == 8) {
      double d = (double)index;
      memcpy(&bits, &d, 8);
    } else if (info->kind == GS_KEY_KIND_FLOAT) {
      float f = (float)index;
      uint32_t b;
      memcpy(&b, &f, 4);
      bits = b;
    }
    gs_key_store_bits(info->bytes, p + i * stride, bits);
  }
}

/* ---- Keys of any form ---- */

/* Raw bits of the half types' edge values, as f32_specials. */
static const uint16_t f16_specials[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7fff, 0xffff,
                                        0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x7bff, 0xfbff, 0x3c00, 0xbc00};
static const uint16_t bf16_specials[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xff81, 0x7fff, 0xffff,
                                         0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x8080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80};

/* Raw bits of a numeric part under the special distribution: every other key an edge value,
 * the rest ordinary (floats of moderate size, any integer). */
static uint64_t special_part(const gs_key_part *part, uint64_t r) {
  const unsigned w = part->bytes;
  if (part->kind == GS_PART_FLOAT && w == 2) {
    const bool bf16 = part->type == GPUSORT_BF16;
    if (r & 1) return bf16 ? bf16_specials[(r >> 1) % 20] : f16_specials[(r >> 1) % 20];
    const uint64_t sign = (r >> 40) & 1, exponent = (bf16 ? 119 : 7) + (r >> 1) % 17;
    return sign << 15 | exponent << (bf16 ? 7 : 10) | ((r >> 8) & (bf16 ? 0x7f : 0x3ff));
  }
  if (part->kind == GS_PART_FLOAT) {
    const gs_key_info info = {NULL, w, GS_KEY_KIND_FLOAT};
    return gs_bits_from_ordered(GS_KEY_KIND_FLOAT, w, special_key(&info, r));
  }
  const uint64_t all = w == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * w)) - 1, sign = (uint64_t)1 << (8 * w - 1);
  const uint64_t edges[] = {0, 1, all, all - 1, sign, sign - 1, sign + 1, 2};
  return gs_bits_from_ordered((gs_key_kind)part->kind, w, (r & 1) ? edges[(r >> 1) % 8] : (r >> 1) & all);
}

static void store_field(const gs_field_type *t, unsigned char *field, uint64_t bits) {
  gs_field_store_bits(field, t->bytes, t->big_endian, bits);
}

static void store_part(const gs_key_part *part, unsigned char *field, uint64_t bits) {
  const gs_field_type t = {NULL, part->bytes, part->kind, part->big_endian};
  store_field(&t, field, bits);
}

/* The normalized form of key i: spec->bytes bytes, drawn as a big-endian number. */
static void keyed_form(const gs_key_spec *spec, gs_dist dist, uint64_t seed, uint64_t n, uint64_t i,
                       unsigned char *form) {
  const unsigned bytes = spec->bytes, bits = bytes * 8;
  memset(form, 0, bytes);
  uint64_t word;
  for (unsigned at = 0; at < bytes; at += 8) { /* words of 8 bytes from the front */
    const uint64_t stream = 16 + at / 8;
    switch (dist.kind) {
    case GS_DIST_EQUAL: word = random_word(seed, stream, 0); break;
    case GS_DIST_FEW: word = random_word(seed + 1, stream, random_word(seed, 0, i) % dist.param); break;
    case GS_DIST_ENTROPY:
      word = UINT64_MAX;
      for (unsigned k = 0; k < dist.param; k++) word &= random_word(seed + k, stream, i);
      break;
    default: word = random_word(seed, stream, i); break; /* uniform, and the bits kept below */
    }
    for (unsigned b = 0; b < 8 && at + b < bytes; b++) form[at + b] = (unsigned char)(word >> (56 - 8 * b));
  }
  if (dist.kind == GS_DIST_SORTED || dist.kind == GS_DIST_REVERSED) { /* the top 64 bits (or all) */
    const unsigned top = bits < 64 ? bits : 64;
    const uint64_t pos = dist.kind == GS_DIST_SORTED ? i : n - 1 - i;
    __extension__ const uint64_t scaled = (uint64_t)(((unsigned __int128)pos << top) / n);
    memset(form, 0, bytes);
    for (unsigned b = 0; b < top / 8; b++) form[b] = (unsigned char)(scaled >> (top - 8 - 8 * b));
  } else if (dist.kind == GS_DIST_LOWBITS || dist.kind == GS_DIST_HIGHBITS) {
    const unsigned keep = dist.param < bits ? dist.param : bits; /* bits that vary */
    for (unsigned b = 0; b < bits; b++) { /* b from the form's top bit */
      const bool varies = dist.kind == GS_DIST_HIGHBITS ? b < keep : b >= bits - keep;
      if (!varies) form[b / 8] &= (unsigned char)~(0x80u >> (b % 8));
    }
  }
}

typedef struct {
  const gs_key_spec *spec;
  gs_dist dist;
  uint64_t seed, n, first;
  unsigned char *out;
  size_t stride;
} keyed_job;

static void keyed_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const keyed_job *job = arg;
  const gs_key_spec *spec = job->spec;
  unsigned char form[GS_KEY_SPEC_MAX_BYTES];
  for (size_t i = begin; i < end; i++) {
    const uint64_t index = job->first + i;
    unsigned char *record = job->out + i * job->stride;
    if (job->dist.kind != GS_DIST_SPECIAL) keyed_form(spec, job->dist, job->seed, job->n, index, form);
    unsigned at = 0; /* of the part in the form */
    for (unsigned p = 0; p < spec->count; p++) {
      const gs_key_part *part = &spec->parts[p];
      unsigned char *field = record + part->offset;
      const uint64_t r = random_word(job->seed, 48 + p, index);
      if (job->dist.kind == GS_DIST_SPECIAL && part->kind == GS_PART_BYTES) {
        for (unsigned b = 0; b < part->bytes; b++)
          field[b] = (r & 1) ? ((r >> 1) & 1 ? 0xFF : 0x00) : (unsigned char)random_word(job->seed, 64 + b, index);
      } else if (job->dist.kind == GS_DIST_SPECIAL) {
        store_part(part, field, special_part(part, r));
      } else if (part->kind == GS_PART_BYTES) { /* (a descending part's form is complemented) */
        for (unsigned b = 0; b < part->bytes; b++) field[b] = part->descending ? (unsigned char)~form[at + b] : form[at + b];
      } else {
        uint64_t ordered = 0;
        for (unsigned b = 0; b < part->bytes; b++) ordered = ordered << 8 | form[at + b];
        if (part->descending) ordered = ~ordered & (part->bytes == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * part->bytes)) - 1);
        store_part(part, field, gs_bits_from_ordered((gs_key_kind)part->kind, part->bytes, ordered));
      }
      at += part->bytes;
    }
  }
}

void gs_generate_keyed(const gs_key_spec *spec, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first, uint64_t count,
                       void *out, size_t stride) {
  keyed_job job = {spec, dist, seed, n, first, out, stride};
  gs_parallel_for((size_t)count, 1 << 14, keyed_range, &job);
}

void gs_generate_index_field(const gs_field_type *type, uint64_t first, uint64_t count, void *out, size_t stride) {
  unsigned char *p = out;
  for (uint64_t i = 0; i < count; i++) {
    const uint64_t index = first + i;
    uint64_t bits = index;
    if (type->kind == GS_PART_FLOAT && type->bytes == 8) {
      const double d = (double)index;
      memcpy(&bits, &d, 8);
    } else if (type->kind == GS_PART_FLOAT && type->bytes == 4) {
      const float f = (float)index;
      uint32_t b;
      memcpy(&b, &f, 4);
      bits = b;
    } else if (type->kind == GS_PART_FLOAT) {
      bits = strcmp(type->name, "bf16") == 0 ? gs_f32_to_bf16((float)index) : gs_f32_to_f16((float)index);
    }
    store_field(type, p + i * stride, bits);
  }
}
