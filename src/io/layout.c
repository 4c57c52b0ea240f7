#include "io/layout.h"

#include <stdio.h>

#include "util/error.h"

int gs_layout_from_options(const gs_layout_options *o, gs_layout *l) {
  if (!o->have_key) return gs_fail(GS_ERR_USAGE, "missing --keys TYPE: say what the file holds (%s)", gs_key_type_names());
  const unsigned key_bytes = gs_key_info_of(o->key)->bytes;
  *l = (gs_layout){.kind = GS_LAYOUT_KEYS, .key = o->key, .record_bytes = key_bytes};
  if (o->have_value && o->record_bytes)
    return gs_fail(GS_ERR_USAGE, "--values and --record-size both describe the records: give one of them");
  if (o->have_key_offset && !o->record_bytes)
    return gs_fail(GS_ERR_USAGE, "--key-offset needs --record-size");
  if (o->have_value) {
    l->kind = GS_LAYOUT_PAIRS;
    l->value = o->value;
    l->value_offset = key_bytes;
    l->record_bytes = key_bytes + gs_key_info_of(o->value)->bytes;
  } else if (o->record_bytes) {
    if (o->record_bytes > GS_MAX_RECORD_BYTES)
      return gs_fail(GS_ERR_USAGE, "--record-size %lu is larger than %u bytes", o->record_bytes,
                     (unsigned)GS_MAX_RECORD_BYTES);
    if (o->key_offset + key_bytes > o->record_bytes)
      return gs_fail(GS_ERR_USAGE, "a %u-byte %s key at byte %lu does not fit a %lu-byte record", key_bytes,
                     gs_key_info_of(o->key)->name, o->key_offset, o->record_bytes);
    l->kind = GS_LAYOUT_RECORDS;
    l->record_bytes = (unsigned)o->record_bytes;
    l->key_offset = (unsigned)o->key_offset;
  }
  return GS_OK;
}

void gs_layout_describe(const gs_layout *l, char *buf, size_t size) {
  const char *key = gs_key_info_of(l->key)->name;
  switch (l->kind) {
  case GS_LAYOUT_KEYS: snprintf(buf, size, "%s keys", key); break;
  case GS_LAYOUT_PAIRS: snprintf(buf, size, "(%s key, %s value) pairs", key, gs_key_info_of(l->value)->name); break;
  case GS_LAYOUT_RECORDS:
    snprintf(buf, size, "%u-byte records with %s %s key at byte %u", l->record_bytes, key[0] == 'i' ? "an" : "a", key,
             l->key_offset);
    break;
  }
}

void gs_layout_unit(const gs_layout *l, char *buf, size_t size) {
  const char *key = gs_key_info_of(l->key)->name;
  switch (l->kind) {
  case GS_LAYOUT_KEYS: snprintf(buf, size, "%s %s key", key[0] == 'i' ? "an" : "a", key); break;
  case GS_LAYOUT_PAIRS: snprintf(buf, size, "a (%s, %s) pair", key, gs_key_info_of(l->value)->name); break;
  case GS_LAYOUT_RECORDS: snprintf(buf, size, "a %u-byte record", l->record_bytes); break;
  }
}
