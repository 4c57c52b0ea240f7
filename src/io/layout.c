#include "io/layout.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

/* A part of the key from a public type: its field, checked against the record. */
static int make_part(gpusort_type type, uint32_t string_bytes, uint32_t offset, bool descending, gs_key_part *part,
                     const char *what) {
  const gs_field_type *t = gs_field_type_of(type);
  if (!t) return gs_fail(GPUSORT_ERROR_USAGE, "%s has no valid type (%d)", what, (int)type);
  unsigned bytes = t->bytes;
  if (t->kind == GS_PART_BYTES) {
    if (string_bytes < 1 || string_bytes > GS_KEY_SPEC_MAX_BYTES)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: a bytes key of %u bytes; give 1 to %u", what, string_bytes,
                     (unsigned)GS_KEY_SPEC_MAX_BYTES);
    bytes = string_bytes;
  } else if (string_bytes) {
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: a length is given for %s, which has its own size", what, t->name);
  }
  *part = (gs_key_part){offset, bytes, t->kind, t->big_endian, descending, type};
  return GPUSORT_OK;
}

static void part_name(const gs_key_part *p, char *buf, size_t size) {
  if (p->kind == GS_PART_BYTES) snprintf(buf, size, "bytes:%u", p->bytes);
  else snprintf(buf, size, "%s", gs_field_type_of(p->type)->name);
}

/* The one-part spec of a plain key; keyed unless the key is a GPU type in native order. */
static bool gpu_type(gpusort_type type, gs_key_type *out) { return gs_key_type_from_public(type, out) == 0; }

int gs_layout_from_public(const gpusort_layout *p, gs_layout *l) {
  memset(l, 0, sizeof *l);
  if (p->reserved) return gs_fail(GPUSORT_ERROR_USAGE, "the layout's reserved field is not zero");
  const bool composite = p->part_count != 0 || p->parts != NULL;
  const bool have_value = p->value != GPUSORT_TYPE_NONE;
  gs_key_spec *spec = &l->spec;
  int rc;
  if (composite) {
    if (p->key != GPUSORT_TYPE_NONE || p->key_offset || p->key_bytes)
      return gs_fail(GPUSORT_ERROR_USAGE, "a layout with key parts has no key type, key offset or key length");
    if (!p->parts || p->part_count < 1 || p->part_count > GS_KEY_SPEC_MAX_PARTS)
      return gs_fail(GPUSORT_ERROR_USAGE, "a composite key has 1 to %u parts, not %u", (unsigned)GS_KEY_SPEC_MAX_PARTS,
                     p->part_count);
    if (!p->record_bytes || have_value) return gs_fail(GPUSORT_ERROR_USAGE, "a composite key needs a record size");
    for (uint32_t i = 0; i < p->part_count; i++) {
      const gpusort_key_part *in = &p->parts[i];
      char what[32];
      snprintf(what, sizeof what, "key part %u", i + 1);
      if (in->flags & ~GPUSORT_KEY_DESCENDING)
        return gs_fail(GPUSORT_ERROR_USAGE, "%s: flags 0x%x do not apply to it", what, in->flags);
      if ((rc = make_part(in->type, in->bytes, in->offset, in->flags & GPUSORT_KEY_DESCENDING, &spec->parts[i], what)))
        return rc;
    }
    spec->count = p->part_count;
    snprintf(l->key_name, sizeof l->key_name, "composite");
  } else {
    if ((rc = make_part(p->key, p->key_bytes, p->key_offset, false, &spec->parts[0], "the layout's key")))
      return rc;
    spec->count = 1;
    part_name(&spec->parts[0], l->key_name, sizeof l->key_name);
  }
  for (unsigned i = 0; i < spec->count; i++) spec->bytes += spec->parts[i].bytes;
  if (spec->bytes > GS_KEY_SPEC_MAX_BYTES)
    return gs_fail(GPUSORT_ERROR_USAGE, "a key of %u bytes; keys have at most %u", spec->bytes,
                   (unsigned)GS_KEY_SPEC_MAX_BYTES);
  const unsigned key_bytes = spec->parts[0].bytes;
  l->keyed = composite || !gpu_type(p->key, &l->key);
  l->kind = GS_LAYOUT_KEYS;
  l->record_bytes = key_bytes;
  if (have_value) {
    const gs_field_type *v = gs_field_type_of(p->value);
    if (!v || v->kind == GS_PART_BYTES)
      return gs_fail(GPUSORT_ERROR_USAGE, "the layout's value type (%d) is not a type of fixed size", (int)p->value);
    if (p->record_bytes)
      return gs_fail(GPUSORT_ERROR_USAGE, "a layout with a value type and a record size: give one of them");
    l->kind = GS_LAYOUT_PAIRS;
    if (!gpu_type(p->value, &l->value)) l->keyed = true;
    l->value_offset = key_bytes;
    l->record_bytes = key_bytes + v->bytes;
    snprintf(l->value_name, sizeof l->value_name, "%s", v->name);
  }
  if (p->key_offset && !p->record_bytes) return gs_fail(GPUSORT_ERROR_USAGE, "a key offset needs a record size");
  if (p->record_bytes && !have_value) {
    if (p->record_bytes > GS_MAX_RECORD_BYTES)
      return gs_fail(GPUSORT_ERROR_USAGE, "records of %u bytes are larger than %u bytes", p->record_bytes,
                     (unsigned)GS_MAX_RECORD_BYTES);
    for (unsigned i = 0; i < spec->count; i++) {
      const gs_key_part *part = &spec->parts[i];
      char name[32];
      part_name(part, name, sizeof name);
      if ((uint64_t)part->offset + part->bytes > p->record_bytes)
        return gs_fail(GPUSORT_ERROR_USAGE, "a %u-byte %s key at byte %u does not fit a %u-byte record", part->bytes,
                       name, part->offset, p->record_bytes);
    }
    l->kind = GS_LAYOUT_RECORDS;
    l->record_bytes = p->record_bytes;
    l->key_offset = p->key_offset;
  }
  if (l->keyed) {
    l->key = GS_KEY_U64;
    l->value = GS_KEY_U64;
  }
  return GPUSORT_OK;
}

void gs_layout_unit(const gs_layout *l, char *buf, size_t size) {
  const char *key = l->key_name;
  switch (l->kind) {
  case GS_LAYOUT_KEYS: snprintf(buf, size, "%s %s key", key[0] == 'i' ? "an" : "a", key); break;
  case GS_LAYOUT_PAIRS: snprintf(buf, size, "a (%s, %s) pair", key, l->value_name); break;
  case GS_LAYOUT_RECORDS: snprintf(buf, size, "a %u-byte record", l->record_bytes); break;
  }
}
