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
  if (!composite && !have_value && p->key == GPUSORT_TYPE_NONE && !p->record_bytes && !p->key_offset &&
      !p->key_bytes && !p->part_fields) {
    l->from_file = true; /* GPUSORT_LAYOUT_NPY: whatever the .npy header says */
    snprintf(l->key_name, sizeof l->key_name, "file's");
    return GPUSORT_OK;
  }
  if (p->part_fields) { /* fields of a .npy input's structured dtype, resolved with its header */
    if (!p->parts || p->part_count < 1 || p->part_count > GS_KEY_SPEC_MAX_PARTS)
      return gs_fail(GPUSORT_ERROR_USAGE, "a composite key has 1 to %u parts, not %u", (unsigned)GS_KEY_SPEC_MAX_PARTS,
                     p->part_count);
    if (p->key != GPUSORT_TYPE_NONE || p->key_offset || p->key_bytes || have_value)
      return gs_fail(GPUSORT_ERROR_USAGE, "a layout of named fields has no key type, key offset, length or value");
    for (uint32_t i = 0; i < p->part_count; i++) {
      if (!p->part_fields[i] || !p->part_fields[i][0] || strlen(p->part_fields[i]) >= sizeof l->field_names[i])
        return gs_fail(GPUSORT_ERROR_USAGE, "key part %u names no field (or too long a name)", i + 1);
      if (p->parts[i].flags & ~GPUSORT_KEY_DESCENDING)
        return gs_fail(GPUSORT_ERROR_USAGE, "key part %u: flags 0x%x do not apply to it", i + 1, p->parts[i].flags);
      snprintf(l->field_names[i], sizeof l->field_names[i], "%s", p->part_fields[i]);
      l->field_descending[i] = p->parts[i].flags & GPUSORT_KEY_DESCENDING;
    }
    l->named_fields = true;
    l->spec.count = p->part_count;
    l->record_bytes = p->record_bytes;
    snprintf(l->key_name, sizeof l->key_name, "composite");
    return GPUSORT_OK;
  }
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

/* Every field of the dtype, for messages: "a (<u4), b (<f8)". */
static void field_list(const gs_npy *npy, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (unsigned i = 0; i < npy->field_count && used + 1 < size; i++) {
    const int k = snprintf(buf + used, size - used, "%s%s (%s)", i ? ", " : "", npy->fields[i].name,
                           npy->fields[i].descr);
    if (k < 0) break;
    used += (size_t)k;
  }
}

static const gs_npy_field *find_field(const gs_npy *npy, const char *name) {
  for (unsigned i = 0; i < npy->field_count; i++)
    if (strcmp(npy->fields[i].name, name) == 0) return &npy->fields[i];
  return NULL;
}

int gs_layout_resolve_npy(gs_layout *l, const gs_npy *npy, const char *name) {
  char fields[1024];
  field_list(npy, fields, sizeof fields);
  if (l->kind == GS_LAYOUT_PAIRS && !l->from_file && !l->named_fields)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: a .npy file's header says what its elements are: leave out --values", name);
  if (l->from_file) {
    if (npy->structured)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: a .npy file of a structured dtype: name the key's field (--key FIELD; "
                     "fields: %s)", name, fields);
    const gpusort_layout keys = {sizeof keys, npy->simple.type, GPUSORT_TYPE_NONE, 0, 0, npy->simple.string_bytes,
                                 0, 0, NULL, NULL};
    return gs_layout_from_public(&keys, l);
  }
  if (l->named_fields) {
    if (!npy->structured)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: its .npy dtype '%s' has no fields to name", name, npy->simple.descr);
    if (l->record_bytes && l->record_bytes != npy->itemsize)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: its .npy records are %u bytes, not %u", name, npy->itemsize,
                     l->record_bytes);
    gpusort_key_part parts[GS_KEY_SPEC_MAX_PARTS];
    for (unsigned i = 0; i < l->spec.count; i++) {
      const gs_npy_field *f = find_field(npy, l->field_names[i]);
      if (!f) return gs_fail(GPUSORT_ERROR_USAGE, "%s has no field '%s' (fields: %s)", name, l->field_names[i], fields);
      if (f->type == GPUSORT_TYPE_NONE)
        return gs_fail(GPUSORT_ERROR_USAGE, "%s: field '%s' of type '%s' cannot be a key", name, f->name, f->descr);
      parts[i] = (gpusort_key_part){f->offset, f->type, f->string_bytes, l->field_descending[i] ? GPUSORT_KEY_DESCENDING : 0};
    }
    const gpusort_layout composite = GPUSORT_LAYOUT_COMPOSITE(npy->itemsize, l->spec.count, parts);
    return gs_layout_from_public(&composite, l);
  }
  /* given in full: it must describe the same records */
  if (l->record_bytes != npy->itemsize)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: its .npy elements are %u bytes ('%s'), the layout's %u", name,
                   npy->itemsize, npy->structured ? "structured" : npy->simple.descr, l->record_bytes);
  if (!npy->structured && (l->spec.count != 1 || l->spec.parts[0].type != npy->simple.type))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: its .npy elements are '%s', not %s keys", name, npy->simple.descr,
                   l->key_name);
  return GPUSORT_OK;
}

static int check_resolved(const gs_layout *l, const char *name) {
  if (l->from_file)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s is not a .npy file: say what it holds (--keys TYPE)", name);
  if (l->named_fields)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s is not a .npy file: key fields are named only in .npy files", name);
  return GPUSORT_OK;
}

int gs_layout_for_input(gs_layout *l, const char *path, gs_npy *npy, bool *is_npy) {
  const int rc = gs_npy_probe(path, npy, is_npy);
  if (rc) return rc;
  return *is_npy ? gs_layout_resolve_npy(l, npy, path) : check_resolved(l, strcmp(path, "-") == 0 ? "stdin" : path);
}

void gs_layout_unit(const gs_layout *l, char *buf, size_t size) {
  const char *key = l->key_name;
  switch (l->kind) {
  case GS_LAYOUT_KEYS: snprintf(buf, size, "%s %s key", key[0] == 'i' ? "an" : "a", key); break;
  case GS_LAYOUT_PAIRS: snprintf(buf, size, "a (%s, %s) pair", key, l->value_name); break;
  case GS_LAYOUT_RECORDS: snprintf(buf, size, "a %u-byte record", l->record_bytes); break;
  }
}
