/* What the public entry points share: the context type, and the handling of the versioned
 * structs callers pass (struct_size first; fields only ever added at the end). */
#ifndef GS_API_API_H
#define GS_API_API_H

#include <stddef.h>

#include "gpusort.h"
#include "job/context.h"

struct gpusort_context {
  gs_context job;
};

/* The public structs' sizes where pointers are 8 bytes are part of the ABI: a change that
 * moves one is a break (bump lib_soversion in meson.build); a new field takes the place of a
 * `reserved` one, or goes at the end. */
#define GS_API_SIZE(type, bytes) \
  _Static_assert(sizeof(void *) != 8 || sizeof(type) == (bytes), #type " changed size: an ABI break")

/* Copies a caller's input struct into `full` (`size` bytes, zeroed first: fields the caller's
 * version lacks take their defaults). Usage errors: a struct_size below `oldest` (the size of
 * the struct's first version: an uninitialized struct), or bytes past what this library knows
 * that are not zero (options of a later version). */
int gs_api_copy_in(void *full, size_t size, const void *user, size_t oldest, const char *what);

/* Copies a filled output struct back into the caller's, up to the caller's struct_size. */
int gs_api_copy_out(void *user, const void *full, size_t size, const char *what);

/* A usage error unless a struct's `reserved` field is zero (a later version's field, or junk). */
int gs_api_check_reserved(uint32_t reserved, const char *what);

/* A usage error unless every bit of `flags` is in `allowed`. */
int gs_api_check_flags(uint32_t flags, uint32_t allowed, const char *call);

/* A scan configuration from a caller's options (they name the element type, unless `file`
 * is a .npy file, whose header then does); `allowed` says which flags the call takes. */
int gs_api_scan_config(const gpusort_scan_options *options, uint32_t allowed, bool reduce, const char *file,
                       const char *call, gs_scan_config *config, uint32_t *flags);

#endif
