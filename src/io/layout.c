#include "io/layout.h"

#include <stdio.h>

#include "util/error.h"

int gs_layout_from_public(const gpusort_layout *p, gs_layout *l) {
  gs_key_type key, value;
  if (gs_key_type_from_public(p->key, &key) != 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "the layout has no valid key type (%d)", (int)p->key);
  const unsigned key_bytes = gs_key_info_of(key)->bytes;
  *l = (gs_layout){.kind = GS_LAYOUT_KEYS, .key = key, .record_bytes = key_bytes};
  const bool have_value = p->value != GPUSORT_TYPE_NONE;
  if (have_value && gs_key_type_from_public(p->value, &value) != 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "the layout's value type (%d) is not a type", (int)p->value);
  if (have_value && p->record_bytes)
    return gs_fail(GPUSORT_ERROR_USAGE, "a layout with a value type and a record size: give one of them");
  if (p->key_offset && !p->record_bytes) return gs_fail(GPUSORT_ERROR_USAGE, "a key offset needs a record size");
  if (have_value) {
    l->kind = GS_LAYOUT_PAIRS;
    l->value = value;
    l->value_offset = key_bytes;
    l->record_bytes = key_bytes + gs_key_info_of(value)->bytes;
  } else if (p->record_bytes) {
    if (p->record_bytes > GS_MAX_RECORD_BYTES)
      return gs_fail(GPUSORT_ERROR_USAGE, "records of %u bytes are larger than %u bytes", p->record_bytes,
                     (unsigned)GS_MAX_RECORD_BYTES);
    if ((uint64_t)p->key_offset + key_bytes > p->record_bytes)
      return gs_fail(GPUSORT_ERROR_USAGE, "a %u-byte %s key at byte %u does not fit a %u-byte record", key_bytes,
                     gs_key_info_of(key)->name, p->key_offset, p->record_bytes);
    l->kind = GS_LAYOUT_RECORDS;
    l->record_bytes = p->record_bytes;
    l->key_offset = p->key_offset;
  }
  return GPUSORT_OK;
}

void gs_layout_unit(const gs_layout *l, char *buf, size_t size) {
  const char *key = gs_key_info_of(l->key)->name;
  switch (l->kind) {
  case GS_LAYOUT_KEYS: snprintf(buf, size, "%s %s key", key[0] == 'i' ? "an" : "a", key); break;
  case GS_LAYOUT_PAIRS: snprintf(buf, size, "a (%s, %s) pair", key, gs_key_info_of(l->value)->name); break;
  case GS_LAYOUT_RECORDS: snprintf(buf, size, "a %u-byte record", l->record_bytes); break;
  }
}
