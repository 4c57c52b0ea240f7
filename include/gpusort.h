/* libgpusort: sort and scan arrays and files of fixed-width records on the GPU (Vulkan compute).
 *
 * Three tiers (gpusort(3) documents every function, its errors and its lifetime rules):
 *   1. a context: one Vulkan device opened for you, with a timeout and a memory budget;
 *   2. jobs on a context: sort, argsort, scan and reduce of host arrays, and of files (staging,
 *      temporary file and rename, verification, checksum, and a report of where time went);
 *   3. the Vulkan tier (gpusort_vulkan.h): sorts and scans recorded into your own command
 *      buffer, on your own VkDevice and buffers.
 * This header uses no Vulkan type.
 *
 * Conventions:
 *   - Every function that can fail returns a gpusort_status: GPUSORT_OK (0) or an error code.
 *     gpusort_last_error() is the one-line message of the last failure on the calling thread;
 *     gpusort_status_class() folds a code into the three classes the command line exits with.
 *   - Structs that cross the API start with `struct_size`: initialize them with their _INIT
 *     macro (which also sets the defaults), then change fields. Fields are only ever added at
 *     the end (or take the place of a `reserved` field, which must be zero), so a program built
 *     against this header keeps working with later libraries. Zero means "default" for every
 *     other field unless its comment says otherwise. Structs have no implicit padding, and
 *     enums are 32 bits wide.
 *   - Counts are numbers of records (keys, pairs, records, elements), never bytes, unless
 *     the name says bytes. Keys and values are in the machine's byte order.
 *   - Nothing is printed; no signal handler is installed; no global state is kept but the
 *     per-thread error message, a table of temporary files (gpusort_remove_temporary_files)
 *     and one of mapped files (gpusort_fault_message).
 *   - A context is used by one thread at a time; different contexts may be used at once. */
#ifndef GPUSORT_H
#define GPUSORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUSORT_VERSION_MAJOR 0
#define GPUSORT_VERSION_MINOR 7
#define GPUSORT_VERSION_PATCH 53
#define GPUSORT_VERSION_NUMBER (GPUSORT_VERSION_MAJOR * 10000 + GPUSORT_VERSION_MINOR * 100 + GPUSORT_VERSION_PATCH)
#define GPUSORT_VERSION_STRING "0.7.53"

/* Initializer of a struct whose fields all default to zero but struct_size (in C++, a value
 * built by a function, so that -Wmissing-field-initializers has nothing to say). */
#ifdef __cplusplus
extern "C++" {
template <class T> inline T gpusort_zero_init_() {
  T value = T();
  value.struct_size = sizeof(T);
  return value;
}
}
#define GPUSORT_OUTPUT_INIT_(type) gpusort_zero_init_<type>()
#else
#define GPUSORT_OUTPUT_INIT_(type) {.struct_size = sizeof(type)}
#endif

#ifndef GPUSORT_API
#if defined(__GNUC__) || defined(__clang__)
#define GPUSORT_API __attribute__((visibility("default")))
#else
#define GPUSORT_API
#endif
#endif

/* The library's version, as GPUSORT_VERSION_NUMBER and GPUSORT_VERSION_STRING were when it was built. */
GPUSORT_API unsigned gpusort_version_number(void);
GPUSORT_API const char *gpusort_version_string(void);

/* ---- Errors ------------------------------------------------------------------------------ */

typedef enum gpusort_status {
  GPUSORT_OK = 0,
  /* The three classes; gpusort_status_class() maps every code to one of them. */
  GPUSORT_ERROR_RUNTIME = 1, /* the device, memory, I/O or a GPU stall: the request was fine */
  GPUSORT_ERROR_USAGE = 2,   /* a bad argument or combination, or malformed input */
  GPUSORT_ERROR_VERIFY = 3,  /* GPUSORT_VERIFY found a wrong result */
  /* Runtime class. */
  GPUSORT_ERROR_NO_DEVICE = 10,     /* no usable Vulkan device or driver */
  GPUSORT_ERROR_OUT_OF_MEMORY = 11, /* host or GPU memory */
  GPUSORT_ERROR_IO = 12,            /* a file could not be opened, read, written or renamed */
  GPUSORT_ERROR_TOO_LARGE = 13,     /* more records than the device, the budget or a capacity allows */
  GPUSORT_ERROR_GPU_STALL = 14,     /* a GPU wait passed the timeout, or the device was lost: the
                                       context can only be closed (see gpusort_close) */
  /* Usage class. */
  GPUSORT_ERROR_BAD_INPUT = 20,          /* malformed input: a size that is not a whole number of
                                            records, a directory, the min of no elements */
  GPUSORT_ERROR_OUTPUT_EXISTS = 21,      /* without GPUSORT_OVERWRITE */
  GPUSORT_ERROR_OUTPUT_IS_INPUT = 22,    /* the same file, also through links: always refused */
  GPUSORT_ERROR_OUTPUT_IS_TERMINAL = 23, /* binary data to a terminal, without GPUSORT_OVERWRITE */
  GPUSORT_ERROR_NO_SUCH_DEVICE = 24,     /* a device index past the last device */
  /* Verification class. */
  GPUSORT_ERROR_NOT_SORTED = 30, /* gpusort_check_file found records out of order */
  GPUSORT_STATUS_ENUM_SIZE_ = 0x7FFFFFFF /* keeps every enum of the API 32 bits wide */
} gpusort_status;

/* GPUSORT_OK, GPUSORT_ERROR_RUNTIME, GPUSORT_ERROR_USAGE or GPUSORT_ERROR_VERIFY. */
GPUSORT_API int gpusort_status_class(int status);
/* "GPUSORT_ERROR_IO", ...; "unknown status" for anything else. */
GPUSORT_API const char *gpusort_status_name(int status);
/* The message of the last failed call on this thread ("" if none): one line, no newline. */
GPUSORT_API const char *gpusort_last_error(void);

/* ---- Types and layouts ------------------------------------------------------------------- */

typedef enum gpusort_type {
  GPUSORT_TYPE_NONE = 0,
  /* In the machine's byte order; these six sort on the GPU as they are, and are the types of
   * scans, reductions and values of bench. */
  GPUSORT_U32,
  GPUSORT_I32,
  GPUSORT_F32,
  GPUSORT_U64,
  GPUSORT_I64,
  GPUSORT_F64,
  /* Narrow and half types, in the machine's byte order. */
  GPUSORT_U8,
  GPUSORT_I8,
  GPUSORT_U16,
  GPUSORT_I16,
  GPUSORT_F16,  /* IEEE 754 binary16 */
  GPUSORT_BF16, /* bfloat16: the top half of an f32 */
  /* Big-endian (network order) integers and floats. */
  GPUSORT_U16BE,
  GPUSORT_I16BE,
  GPUSORT_U32BE,
  GPUSORT_I32BE,
  GPUSORT_F32BE,
  GPUSORT_U64BE,
  GPUSORT_I64BE,
  GPUSORT_F64BE,
  /* A byte string compared as unsigned bytes, first byte most significant (memcmp order);
   * its length is the layout's key_bytes, or a key part's bytes. */
  GPUSORT_BYTES,
  GPUSORT_TYPE_ENUM_SIZE_ = 0x7FFFFFFF
} gpusort_type;

/* "u32", "u16be", "bytes", ...; NULL for GPUSORT_TYPE_NONE or an unknown value. */
GPUSORT_API const char *gpusort_type_name(gpusort_type type);
/* Parses "u32", "i64", "u16be", "bf16", "bytes", or NumPy's names ("uint32", "float16"):
 * GPUSORT_OK, or GPUSORT_ERROR_USAGE for an unknown name. */
GPUSORT_API int gpusort_type_from_name(const char *name, gpusort_type *type);
/* Bytes of one value of the type; 0 for GPUSORT_TYPE_NONE, GPUSORT_BYTES (its length is
 * given apart) or an unknown value. */
GPUSORT_API size_t gpusort_type_size(gpusort_type type);
/* One value of a numeric type, stored as the type stores it (its byte order), as text into
 * buf: integers in decimal, floats with the fewest digits that read back as the same value
 * ("nan", "-inf"). The text's length, or -1 for no numeric type (buf then holds ""). */
GPUSORT_API int gpusort_format_value(gpusort_type type, const void *value, char *buf, size_t size);

#define GPUSORT_KEY_DESCENDING (1u << 0) /* gpusort_key_part: this part orders largest first */

/* One part of a composite key. The struct is frozen: arrays of it have this stride. */
typedef struct gpusort_key_part {
  uint32_t offset;   /* of the field in the record */
  gpusort_type type; /* any type */
  uint32_t bytes;    /* GPUSORT_BYTES: the string's length (1 to 128); else 0 */
  uint32_t flags;    /* GPUSORT_KEY_DESCENDING */
} gpusort_key_part;

/* What one record looks like. Keys sort numerically; floats by IEEE 754 totalOrder
 * (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN); byte strings as unsigned bytes. Exactly
 * one of:
 *   keys     value NONE, record_bytes 0: an array of keys;
 *   pairs    value set (any type but GPUSORT_BYTES): (key, value) records packed without
 *            padding; the value moves with its key;
 *   records  record_bytes set (1 to 1 MiB): records moved whole, ordered by the key at
 *            key_offset (any alignment), or by the parts of a composite key.
 * A composite key has key GPUSORT_TYPE_NONE, record_bytes set, and part_count parts (1 to
 * 16, together at most 128 bytes), most significant first, each with its own direction (a
 * sort's GPUSORT_DESCENDING reverses them all). A GPUSORT_BYTES key has key_bytes bytes (1 to
 * 128). Keys of the six GPU types (u32 ... f64) sort on the GPU as they are; every other
 * form (narrow, half, big-endian, byte strings, composite keys, and values of the other
 * types) sorts through its normalized form (gpusort(3), KEY FORMS), whose bits a bit range
 * counts; arrays and argsorts in core only, files of records also out of core. */
typedef struct gpusort_layout {
  uint32_t struct_size;
  gpusort_type key;
  gpusort_type value;
  uint32_t record_bytes;
  uint32_t key_offset;
  uint32_t key_bytes;             /* key GPUSORT_BYTES: its length */
  uint32_t part_count;            /* composite keys: the number of parts */
  uint32_t reserved;              /* zero */
  const gpusort_key_part *parts;  /* composite keys: the parts, most significant first */
  /* .npy inputs of a structured dtype: part i is the field named part_fields[i] (its offset
   * and type come from the file; the part's flags still apply), or NULL for offset and type */
  const char *const *part_fields;
} gpusort_layout;

#define GPUSORT_LAYOUT_KEYS(key) {sizeof(gpusort_layout), (key), GPUSORT_TYPE_NONE, 0, 0, 0, 0, 0, NULL, NULL}
#define GPUSORT_LAYOUT_PAIRS(key, value) {sizeof(gpusort_layout), (key), (value), 0, 0, 0, 0, 0, NULL, NULL}
#define GPUSORT_LAYOUT_RECORDS(key, record_bytes, key_offset) \
  {sizeof(gpusort_layout), (key), GPUSORT_TYPE_NONE, (record_bytes), (key_offset), 0, 0, 0, NULL, NULL}
/* Records of record_bytes bytes whose key is the byte string of key_bytes at key_offset. */
#define GPUSORT_LAYOUT_BYTES(record_bytes, key_offset, key_bytes) \
  {sizeof(gpusort_layout), GPUSORT_BYTES, GPUSORT_TYPE_NONE, (record_bytes), (key_offset), (key_bytes), 0, 0, NULL, NULL}
/* Records of record_bytes bytes ordered by part_count parts. */
#define GPUSORT_LAYOUT_COMPOSITE(record_bytes, part_count, parts) \
  {sizeof(gpusort_layout), GPUSORT_TYPE_NONE, GPUSORT_TYPE_NONE, (record_bytes), 0, 0, (part_count), 0, (parts), NULL}
/* For file jobs on .npy files: whatever the file's header says (a structured dtype needs its
 * key fields named: GPUSORT_LAYOUT_NPY_FIELDS). */
#define GPUSORT_LAYOUT_NPY {sizeof(gpusort_layout), GPUSORT_TYPE_NONE, GPUSORT_TYPE_NONE, 0, 0, 0, 0, 0, NULL, NULL}
/* .npy files of a structured dtype, ordered by the named fields (parts: their flags). */
#define GPUSORT_LAYOUT_NPY_FIELDS(part_count, parts, part_fields) \
  {sizeof(gpusort_layout), GPUSORT_TYPE_NONE, GPUSORT_TYPE_NONE, 0, 0, 0, (part_count), 0, (parts), (part_fields)}

/* ---- Flags of options -------------------------------------------------------------------- */

#define GPUSORT_DESCENDING (1u << 0)    /* sort: largest key first, still stable */
#define GPUSORT_VERIFY (1u << 1)        /* sort: check on the host that the output is in key order
                                           and a permutation of the input (argsort: a stable sorted
                                           permutation); else GPUSORT_ERROR_VERIFY, and a file job
                                           writes no output */
#define GPUSORT_EXCLUSIVE (1u << 2)     /* scan: element i combines inputs 0..i-1 (default 0..i) */
#define GPUSORT_DETERMINISTIC (1u << 3) /* scan: bit-identical results run to run; refuses look-back
                                           float sums, whose association order follows timing */
#define GPUSORT_OVERWRITE (1u << 4)     /* file jobs: replace an existing output; allow binary data
                                           to a terminal */
#define GPUSORT_SYNC (1u << 5)          /* file jobs: flush the output and its directory entry to
                                           storage before returning */
/* A flag that does not apply to a call is a usage error. */

/* ---- Tier 1: the context ----------------------------------------------------------------- */

typedef struct gpusort_context gpusort_context;

#define GPUSORT_OPEN_DEFERRED (1u << 0) /* open the device when a job first needs it (a file job
                                           then opens it while it reads its input); jobs that need
                                           no device (check, generate) never open it */

/* Progress of a file job, for a display: `done` of `total` units of work (bytes moved: read,
 * uploaded, partitioned, written), called from the job's thread every few megabytes. `total`
 * is an estimate that a job may raise as it learns more; `done` never decreases. */
typedef void (*gpusort_progress_fn)(void *user, uint64_t done, uint64_t total);

typedef struct gpusort_context_params {
  uint32_t struct_size;
  int32_t device;          /* index in gpusort_list_devices(); -1: the first discrete GPU, else
                              integrated, virtual, then CPU */
  uint32_t flags;          /* GPUSORT_OPEN_DEFERRED */
  uint32_t reserved;
  double timeout_seconds;  /* bound on every wait for the GPU; 0: 60 s */
  uint64_t memory_budget;  /* device memory and pinned staging memory a job may use together, in
                              bytes; 0: three quarters of the device-local memory free when the
                              device opens. Larger jobs run out of core within it. */
  const char *temp_dir;    /* where file jobs put scratch files (a stream larger than the budget,
                              the pieces of an out-of-core sort); NULL: the output's directory, or
                              $TMPDIR (else /tmp) when the output is not a file. Copied. */
  gpusort_progress_fn progress; /* NULL: none */
  void *progress_user;
} gpusort_context_params;

#define GPUSORT_CONTEXT_PARAMS_INIT {sizeof(gpusort_context_params), -1, 0, 0, 0.0, 0, NULL, NULL, NULL}

/* Creates a context (params NULL: the defaults) and, unless deferred, opens its device.
 * Errors: USAGE (bad params), NO_SUCH_DEVICE, NO_DEVICE, OUT_OF_MEMORY, RUNTIME. On failure
 * *ctx is NULL. */
GPUSORT_API int gpusort_open(gpusort_context **ctx, const gpusort_context_params *params);

/* Releases everything the context holds; NULL is ignored. After GPUSORT_ERROR_GPU_STALL the
 * device is abandoned rather than waited on (the driver may still hold the stalled work; a
 * program should leave soon, with _exit, as the driver's own teardown may wait for it). */
GPUSORT_API void gpusort_close(gpusort_context *ctx);

typedef enum gpusort_device_type {
  GPUSORT_DEVICE_OTHER = 0,
  GPUSORT_DEVICE_DISCRETE,
  GPUSORT_DEVICE_INTEGRATED,
  GPUSORT_DEVICE_VIRTUAL,
  GPUSORT_DEVICE_CPU,
  GPUSORT_DEVICE_ENUM_SIZE_ = 0x7FFFFFFF
} gpusort_device_type;

/* "discrete", "integrated", "virtual", "cpu" or "other". */
GPUSORT_API const char *gpusort_device_type_name(gpusort_device_type type);

#define GPUSORT_SMALL_SORT_TILES 4 /* small sorts' tiles a device's configuration has at most */
/* The members of the look-back family whose tiles walk early (compact_early_walk's bits) */
#define GPUSORT_EARLY_WALK_UNIQUE (1u << 0)
#define GPUSORT_EARLY_WALK_RLE (1u << 1)
#define GPUSORT_EARLY_WALK_REDUCE_BY_KEY (1u << 2)

typedef struct gpusort_device_info {
  uint32_t struct_size;
  uint32_t index;          /* as `device` in gpusort_context_params takes it */
  gpusort_device_type type;
  int usable;              /* 0: unusable_reason says why */
  int is_default;          /* the device a context opens by default (set by gpusort_list_devices) */
  uint32_t vendor_id, device_id;
  uint32_t api_version;    /* Vulkan version, VK_MAKE_API_VERSION encoding */
  uint32_t subgroup_size;  /* lanes gpusort runs its kernels at */
  uint32_t sort_keys_per_invocation_wide_pairs; /* sort tile for 64-bit keys with values (since
                                                   0.7.1, in place of a reserved field) */
  uint64_t memory_bytes;   /* device-local memory */
  uint64_t max_buffer_bytes; /* largest storage buffer binding */
  char name[256];
  char driver[512];
  char unusable_reason[256];
  /* The configuration gpusort uses on this device, chosen from vendor, device and driver. */
  char preset[64];
  uint32_t sort_workgroup_size;           /* sort tiles of 32-bit keys: invocations (64-bit keys:
                                             sort_workgroup_size_wide and _wide_pairs; 32-bit values:
                                             sort_workgroup_size_narrow_pairs; 64-bit values:
                                             sort_workgroup_size_pairs) */
  uint32_t sort_keys_per_invocation;      /* 32-bit keys alone (with values:
                                             sort_keys_per_invocation_pairs and
                                             sort_keys_per_invocation_narrow_pairs) */
  uint32_t sort_keys_per_invocation_wide; /* 64-bit keys alone (with values:
                                             sort_keys_per_invocation_wide_pairs) */
  uint32_t scan_workgroup_size;
  uint32_t scan_rows;                     /* 16-byte vectors per invocation of a scan tile (at
                                           * most 8 where the accumulator is wider than the input) */
  uint32_t lookback_spin_limit;           /* polls of a look-back descriptor before recounting */
  uint32_t sort_keys_per_invocation_pairs; /* 32-bit keys with 64-bit values (since 0.7.2;
                                              before, 32-bit values took the keys' shape,
                                              64-bit ones the wide shape; until 0.7.8, with
                                              32-bit values too) */
  uint32_t sort_workgroup_size_wide;      /* sort tiles of 64-bit keys alone: invocations (since
                                             0.7.3, in place of a reserved field; before,
                                             sort_workgroup_size for every key; until 0.7.9,
                                             with values too) */
  uint32_t sort_workgroup_size_narrow_pairs; /* sort tiles of 32-bit keys with 32-bit values or
                                                indices: invocations (since 0.7.8) */
  uint32_t sort_keys_per_invocation_narrow_pairs; /* ... x keys each (since 0.7.8) */
  uint32_t sort_workgroup_size_pairs;     /* sort tiles of 32-bit keys with 64-bit values:
                                             invocations (since 0.7.9; before,
                                             sort_workgroup_size) */
  uint32_t sort_workgroup_size_wide_pairs; /* sort tiles of 64-bit keys with values: invocations
                                              (since 0.7.10; before, sort_workgroup_size_wide) */
  uint32_t compact_workgroup_size;        /* the look-back family's tiles (gpusort_compact):
                                             invocations, before each operation's own bound
                                             (since 0.7.11) */
  uint32_t compact_subtiles;              /* select's and partition's sub-tiles under one
                                             look-back, fewer where shared memory is short
                                             (since 0.7.11) */
  /* Small sorts' tiles (since 0.7.23): Onesweep sorts of few keys take smaller tiles, so that
   * they still spread over the device: a sort of capacity n takes, of those of these smaller
   * than its layout's own tile and that tile, the largest of which sort_small_min_tiles fit in
   * n, else the smallest. */
  uint32_t sort_small_tile_count;         /* 0 to GPUSORT_SMALL_SORT_TILES */
  uint32_t sort_small_workgroup_size[GPUSORT_SMALL_SORT_TILES];    /* invocations, smallest tile first */
  uint32_t sort_small_keys_per_invocation[GPUSORT_SMALL_SORT_TILES]; /* ... x keys each */
  uint32_t sort_small_min_tiles;
  /* Small look-back scans' tiles (since 0.7.23): scans of fewer elements than
   * scan_small_min_tiles of their tiles take tiles of scan_small_rows rows (0: none). */
  uint32_t scan_small_rows;
  uint32_t scan_small_min_tiles;
  /* Select's and partition's read-ahead (since 0.7.30): before its look-back, a tile reads the
   * input about this many KiB past its own into cache (0: none). */
  uint32_t compact_read_ahead_kib;
  /* The early walk (unique since 0.7.33, rle and reduce-by-key since 0.7.34): the members whose
   * tiles' subgroup 0 holds no keys and walks the look-back while the others load theirs
   * (GPUSORT_EARLY_WALK_* bits since 0.7.43, before which 1 stood for all three; a member
   * without its bit loads the whole tile, then walks). */
  uint32_t compact_early_walk;
  /* The look-back scan's early walk (since 0.7.36): 1 where subgroup 0 of each of its tiles
   * holds no elements and walks the look-back while the others load theirs. */
  uint32_t scan_early_walk;
  /* The early walk's read-ahead (since 0.7.37): as it walks, the walker reads the input about
   * this many KiB past its tile into cache (0: none). */
  uint32_t scan_read_ahead_kib;
  /* Float keys' sort tiles (since 0.7.47): a key an invocation fewer than the shapes above in the
   * layouts whose bit is set (1: 32-bit keys alone, 2: with 32-bit values or indices, 4: with
   * 64-bit values, 8: 64-bit keys alone, 16: with values), whose tiles leave no registers for the
   * float map of the first and last passes. */
  uint32_t sort_float_fewer_keys;
  uint32_t reserved_end;                  /* zero (the next field's place) */
} gpusort_device_info;

#define GPUSORT_DEVICE_INFO_INIT GPUSORT_OUTPUT_INIT_(gpusort_device_info)

/* Describes every Vulkan device, usable or not, without opening any. Writes up to `capacity`
 * entries (infos may be NULL when capacity is 0) and sets *count to the number of devices.
 * The caller sets infos[0].struct_size: entries are that many bytes apart. */
GPUSORT_API int gpusort_list_devices(gpusort_device_info *infos, uint32_t capacity, uint32_t *count);

/* The context's device (opening a deferred one). */
GPUSORT_API int gpusort_context_device(gpusort_context *ctx, gpusort_device_info *info);

/* ---- Tier 2: jobs on host arrays --------------------------------------------------------- */

/* How the GPU sorts. Every algorithm gives the same, stable result. */
typedef enum gpusort_sort_algo {
  GPUSORT_SORT_AUTO = 0,         /* bitonic below the device's measured crossover, then Onesweep,
                                    or reduce-then-scan on devices without forward progress
                                    and on lavapipe (the faster there) */
  GPUSORT_SORT_ONESWEEP,         /* LSD radix sort, one pass per digit, decoupled look-back */
  GPUSORT_SORT_REDUCE_THEN_SCAN, /* LSD radix sort, upsweep, scan and downsweep per digit: no
                                    workgroup ever waits on another */
  GPUSORT_SORT_BITONIC,          /* bitonic sorting network, O(n log^2 n); at most 2^31 keys */
  GPUSORT_SORT_ALGO_ENUM_SIZE_ = 0x7FFFFFFF
} gpusort_sort_algo;

typedef struct gpusort_sort_options {
  uint32_t struct_size;
  uint32_t flags;      /* GPUSORT_DESCENDING, GPUSORT_VERIFY; for file jobs also OVERWRITE, SYNC */
  uint32_t begin_bit;  /* sort on bits [begin_bit, end_bit) of the ordered key only (the key */
  uint32_t end_bit;    /* mapped so that unsigned order is its order, complemented when
                          descending; for other key forms, of the normalized form); 0, 0: all
                          bits. Keys equal on those bits keep input order */
  gpusort_sort_algo algo; /* (since 0.4; the 16-byte struct of 0.3 is still accepted) */
} gpusort_sort_options;

#define GPUSORT_SORT_OPTIONS_INIT {sizeof(gpusort_sort_options), 0, 0, 0, GPUSORT_SORT_AUTO}

/* Sorts `count` records of `input` into `output` (stable). output may be input (in place);
 * otherwise the two must not overlap. options NULL: ascending on all bits. */
GPUSORT_API int gpusort_sort(gpusort_context *ctx, const void *input, void *output, uint64_t count,
                             const gpusort_layout *layout, const gpusort_sort_options *options);

/* Writes to `indices` the input positions of the records in sorted order (stable: equal keys
 * in input order), as index_type GPUSORT_U32 or GPUSORT_U64 (NONE: u32 below 2^32 records). */
GPUSORT_API int gpusort_argsort(gpusort_context *ctx, const void *input, uint64_t count,
                                const gpusort_layout *layout, gpusort_type index_type, void *indices,
                                const gpusort_sort_options *options);

typedef enum gpusort_scan_op { GPUSORT_SUM = 0, GPUSORT_MIN, GPUSORT_MAX, GPUSORT_OP_ENUM_SIZE_ = 0x7FFFFFFF } gpusort_scan_op;

typedef enum gpusort_scan_algo {
  GPUSORT_SCAN_AUTO = 0,         /* look-back, but reduce-then-scan for float sums */
  GPUSORT_SCAN_LOOKBACK,         /* single pass with decoupled look-back */
  GPUSORT_SCAN_REDUCE_THEN_SCAN, /* no workgroup waits on another; fixed association order */
  GPUSORT_ALGO_ENUM_SIZE_ = 0x7FFFFFFF
} gpusort_scan_algo;

/* Integer sums wrap modulo 2^width; min and max order floats by totalOrder, as the sort does.
 * Float sums round: for element k the error against exact summation is at most
 * gamma_D * (|x_0| + ... + |x_k|), gamma_D = D*u/(1 - D*u), u = 2^-24 (f32) or 2^-53 (f64),
 * D = (k + 1)/1024 + 64. */
typedef struct gpusort_scan_options {
  uint32_t struct_size;
  gpusort_type type;      /* element type: any numeric one (required; file calls: NONE takes a
                             .npy input's dtype) */
  gpusort_type acc;       /* accumulator and output type: NONE (the element type), or U64, I64 or
                             F64 (8- and 16-bit integers also U32, I32), at least as wide as the
                             input, a float for float input, a signed or float one for signed
                             input; results are in the elements' byte order */
  gpusort_scan_op op;
  gpusort_scan_algo algo;
  uint32_t flags;         /* GPUSORT_EXCLUSIVE, GPUSORT_DETERMINISTIC; file jobs also OVERWRITE, SYNC */
} gpusort_scan_options;

#define GPUSORT_SCAN_OPTIONS_INIT(type) \
  {sizeof(gpusort_scan_options), (type), GPUSORT_TYPE_NONE, GPUSORT_SUM, GPUSORT_SCAN_AUTO, 0}

/* Running sums, minima or maxima of `count` elements into `output` (count results: of the
 * elements' type, or with `acc` of the accumulator's in the elements' byte order; output may
 * be input, also with a wider accumulator if it holds the results: the input is read before
 * any result is written; otherwise they must not overlap). Narrow, half and big-endian
 * elements widen exactly to u32, i32, f32 (or their 64-bit twins) on the GPU, and results
 * come back in their type: integer sums wrap at its width, f16 and bf16 sums are the f32 sums
 * rounded to nearest even. Exclusive scans start with the identity: 0 for sums, the type's
 * largest value for min, its smallest for max. */
GPUSORT_API int gpusort_scan(gpusort_context *ctx, const void *input, void *output, uint64_t count,
                             const gpusort_scan_options *options);

/* The sum, minimum or maximum of all `count` elements, written to *result as one result (of
 * the type gpusort_scan's would have), combined in a fixed order (so bit-identical run to
 * run). The sum of no elements is 0; the min or max of none is GPUSORT_ERROR_BAD_INPUT. */
GPUSORT_API int gpusort_reduce(gpusort_context *ctx, const void *input, uint64_t count,
                               const gpusort_scan_options *options, void *result);

/* The look-back family: one pass each, in which tiles take tickets, publish what they keep,
 * learn their output offset by decoupled look-back and write their records in place.
 *   SELECT         the records whose key satisfies `where`, in input order
 *   PARTITION      the records whose key satisfies `where`, in input order, then all others in
 *                  input order (stable); the split is the number of the first
 *   UNIQUE         the first record of each run of consecutive equal keys
 *   RLE            (key, count) records, packed without padding, one per run of equal keys;
 *                  the count is count_type (U32, or U64)
 *   REDUCE_BY_KEY  (key, value) records, packed, one per run: the run's values combined by
 *                  `op` into the accumulator type `acc` (pairs layout; as for scans: integer
 *                  sums wrap at acc's width, floats sum in a fixed order)
 * Keys are equal when their stored bits are (so -0.0 and +0.0 differ, and a NaN equals only
 * the same NaN): what the sort's order (totalOrder) puts together. Layouts: keys, pairs and
 * records of a numeric key of any type (narrow, half and big-endian ones widened exactly on
 * the way to the GPU; since 0.7); records move whole. `where` (gpusort(1), EXPRESSIONS):
 * comparisons with a constant of the key's type ("< 0.5", ">= 10", "== 7", "!= 0"), half-open
 * ranges ("in [a,b)"), "isnan", "notnan", masked tests of the key's stored bits
 * ("& 0xff == 3"), joined by "and", "or", "not" and parentheses. Float comparisons are IEEE
 * ones: -0.0 == +0.0, and a NaN satisfies only "!=". */
typedef enum gpusort_compact_op {
  GPUSORT_SELECT = 1,
  GPUSORT_PARTITION,
  GPUSORT_UNIQUE,
  GPUSORT_RLE,
  GPUSORT_REDUCE_BY_KEY,
  GPUSORT_COMPACT_OP_ENUM_SIZE_ = 0x7FFFFFFF
} gpusort_compact_op;

typedef struct gpusort_compact_options {
  uint32_t struct_size;
  gpusort_compact_op op;
  uint32_t flags;          /* file jobs: GPUSORT_OVERWRITE, GPUSORT_SYNC */
  gpusort_type count_type; /* RLE: GPUSORT_U32 (also NONE) or GPUSORT_U64 */
  const char *where;       /* SELECT, PARTITION: the predicate on the key */
  gpusort_scan_op reduce;  /* REDUCE_BY_KEY: GPUSORT_SUM, GPUSORT_MIN or GPUSORT_MAX */
  gpusort_type acc;        /* REDUCE_BY_KEY: NONE (the value type) or a wider one, as for scans */
} gpusort_compact_options;

#define GPUSORT_COMPACT_OPTIONS_INIT(op) \
  {sizeof(gpusort_compact_options), (op), 0, GPUSORT_TYPE_NONE, NULL, GPUSORT_SUM, GPUSORT_TYPE_NONE}

/* Bytes of one output record of a compaction of records of `layout`: the layout's record for
 * SELECT, PARTITION and UNIQUE; key plus count (RLE) or key plus accumulator (REDUCE_BY_KEY).
 * 0 for a layout or options that do not go together. */
GPUSORT_API size_t gpusort_compact_record_size(const gpusort_layout *layout, const gpusort_compact_options *options);

/* Compacts `count` records of `input` into `output` (room for `count` output records; they
 * must not overlap) and sets *result_count to the records written (PARTITION: the split; all
 * `count` are written). A run longer than a U32 count is GPUSORT_ERROR_TOO_LARGE. */
GPUSORT_API int gpusort_compact(gpusort_context *ctx, const void *input, void *output, uint64_t count,
                                const gpusort_layout *layout, const gpusort_compact_options *options,
                                uint64_t *result_count);

/* ---- Tier 2: jobs on files --------------------------------------------------------------- */

/* Stages of a job, each timed in gpusort_report.stage_seconds. */
typedef enum gpusort_stage {
  GPUSORT_STAGE_OPEN = 0,  /* opening the device */
  GPUSORT_STAGE_SETUP,     /* pipelines and buffers */
  GPUSORT_STAGE_READ,      /* host: input into staging memory (and reading a stream) */
  GPUSORT_STAGE_UPLOAD,    /* GPU copies into device memory */
  GPUSORT_STAGE_SORT,      /* GPU sort, from timestamps */
  GPUSORT_STAGE_SCAN,      /* GPU scan */
  GPUSORT_STAGE_REDUCE,    /* GPU reduction */
  GPUSORT_STAGE_GATHER,    /* GPU: whole records put in sorted order */
  GPUSORT_STAGE_DOWNLOAD,  /* GPU copies out of device memory */
  GPUSORT_STAGE_WRITE,     /* host: output and checksum */
  GPUSORT_STAGE_ASSEMBLE,  /* host, part of write: records gathered or pairs joined */
  GPUSORT_STAGE_VERIFY,    /* host: order and permutation checks */
  GPUSORT_STAGE_CHECK,     /* host: gpusort_check_file */
  GPUSORT_STAGE_GENERATE,  /* host: gpusort_generate_file */
  GPUSORT_STAGE_SPILL,     /* host: a stream larger than the budget written to a scratch file */
  GPUSORT_STAGE_BUCKETS,   /* out of core, host: the records of each key bucket counted */
  GPUSORT_STAGE_PARTITION, /* out of core: the input moved into its buckets (GPU and host) */
  GPUSORT_STAGE_COMPACT,   /* GPU select, partition, unique, rle or reduce-by-key (since 0.5) */
  GPUSORT_STAGE_COUNT,
  GPUSORT_STAGE_ENUM_SIZE_ = 0x7FFFFFFF
} gpusort_stage;

#define GPUSORT_MAX_STAGES 24 /* room in gpusort_report for stages added later */

/* "open", "setup", "read", ...; NULL for an unknown stage. */
GPUSORT_API const char *gpusort_stage_name(gpusort_stage stage);

typedef struct gpusort_report {
  uint32_t struct_size;
  int verified;          /* GPUSORT_VERIFY ran and passed */
  uint64_t records;      /* records (elements) of the input */
  uint64_t input_bytes;
  uint64_t output_bytes;
  uint64_t xxh3;         /* XXH3-64 of the output's bytes (as xxhsum -H3 prints it) */
  double total_seconds;  /* the whole call */
  double stage_seconds[GPUSORT_MAX_STAGES]; /* by gpusort_stage; 0 for stages not run */
  /* Sorts: the GPU work in detail. */
  double histogram_seconds;      /* the upfront histogram pass */
  double pass_seconds[8];
  uint32_t passes;               /* digit-binning passes */
  uint32_t tile_invocations;     /* sort: workgroup size; scan: workgroup size */
  uint32_t tile_items_per_invocation; /* of those holding items (with an early walk, one subgroup
                                         of the look-back family's and scan's tiles holds none) */
  uint32_t tile_items;           /* keys (sort) or elements (scan) per tile */
  uint32_t tile_shared_bytes;
  uint32_t batches;              /* GPU batches the job took: 1 when all of it fit at once (in core);
                                    an out-of-core sort's in-core sorts, a scan's chunks */
  gpusort_sort_algo algo;        /* sorts: the algorithm that ran (since 0.4) */
  gpusort_type element_type;     /* scans and reductions: the elements' type (a .npy input's header
                                    says it where the options name none; since 0.7)... */
  gpusort_type result_type;      /* ...and the results': the elements', or the accumulator's in
                                    the elements' byte order */
} gpusort_report;

#define GPUSORT_REPORT_INIT GPUSORT_OUTPUT_INIT_(gpusort_report)

/* File jobs. Paths: "-" is stdin or stdout. A regular input is memory-mapped and never
 * modified; a stream is read to its end. A named output is written to a temporary file
 * beside it (".NAME.gpusort-XXXXXX") and renamed over it only when complete, so a failed job
 * leaves no partial output; an existing non-regular output (/dev/null, a FIFO) is written in
 * place. An existing regular output needs GPUSORT_OVERWRITE; an output that is the input is
 * always refused. `report` may be NULL. */

/* Sorts the records of file `input` into file `output`. */
GPUSORT_API int gpusort_sort_file(gpusort_context *ctx, const char *input, const char *output,
                                  const gpusort_layout *layout, const gpusort_sort_options *options,
                                  gpusort_report *report);

/* Writes the records' indices in sorted order (index_type as for gpusort_argsort). */
GPUSORT_API int gpusort_argsort_file(gpusort_context *ctx, const char *input, const char *output,
                                     const gpusort_layout *layout, gpusort_type index_type,
                                     const gpusort_sort_options *options, gpusort_report *report);

GPUSORT_API int gpusort_scan_file(gpusort_context *ctx, const char *input, const char *output,
                                  const gpusort_scan_options *options, gpusort_report *report);

GPUSORT_API int gpusort_reduce_file(gpusort_context *ctx, const char *input, const gpusort_scan_options *options,
                                    void *result, gpusort_report *report);

/* Compacts the records of file `input` into file `output` (a .npy input gives a .npy output:
 * the input's dtype, or a structured one of key and count or value). *result_count as for
 * gpusort_compact; it may be NULL. */
GPUSORT_API int gpusort_compact_file(gpusort_context *ctx, const char *input, const char *output,
                                     const gpusort_layout *layout, const gpusort_compact_options *options,
                                     uint64_t *result_count, gpusort_report *report);

/* Sorts the records of file `input` as gpusort_sort_file does, then runs one step of the
 * look-back family on the sorted records on the GPU, before anything comes back: then->op
 * GPUSORT_UNIQUE keeps the first record of each run of equal keys (the distinct keys, each with
 * the record that came first in the input), GPUSORT_RLE (keys layout) writes (key, count)
 * records as gpusort_compact_file does; `then` gives op and count_type only. In core
 * only (GPUSORT_ERROR_TOO_LARGE beyond the budget); keys of the six GPU types; GPUSORT_VERIFY
 * and bit ranges are refused. *result_count (may be NULL): the records written. (Since 0.6.) */
GPUSORT_API int gpusort_sort_then_file(gpusort_context *ctx, const char *input, const char *output,
                                       const gpusort_layout *layout, const gpusort_sort_options *options,
                                       const gpusort_compact_options *then, uint64_t *result_count,
                                       gpusort_report *report);

/* Host only: GPUSORT_OK if the file's records are in key order (options: GPUSORT_DESCENDING and
 * the bit range), GPUSORT_ERROR_NOT_SORTED naming the first record out of order if not; the
 * report is filled either way (since 0.7.53). */
GPUSORT_API int gpusort_check_file(gpusort_context *ctx, const char *input, const gpusort_layout *layout,
                                   const gpusort_sort_options *options, gpusort_report *report);

/* Deterministic test data: the same layout and options give the same bytes on any machine. */
typedef struct gpusort_generate_options {
  uint32_t struct_size;
  uint32_t flags;           /* file: GPUSORT_OVERWRITE, GPUSORT_SYNC */
  uint64_t count;           /* records */
  const char *distribution; /* NULL or "uniform", "sorted", "reversed", "equal", "few[:K]",
                               "entropy[:K]", "lowbits[:B]", "highbits[:B]", "special" */
  uint64_t seed;
} gpusort_generate_options;

#define GPUSORT_GENERATE_OPTIONS_INIT(count) {sizeof(gpusort_generate_options), 0, (count), NULL, 0}

/* Records [first, first + count_here) of the data set into `records`. Keys of every form
 * (since 0.6; other than the six GPU types drawn over their normalized form, so "sorted" is
 * in the key's own order); pair values are the record's index, as the value's type; record
 * bytes around the key are random. Host only. */
GPUSORT_API int gpusort_generate(const gpusort_layout *layout, const gpusort_generate_options *options,
                                 uint64_t first, uint64_t count_here, void *records);

GPUSORT_API int gpusort_generate_file(gpusort_context *ctx, const char *output, const gpusort_layout *layout,
                                      const gpusort_generate_options *options, gpusort_report *report);

/* Removes the temporary files of file jobs still running in this process. Async-signal-safe:
 * call it from your own handler of SIGINT, SIGTERM and the like before the process ends, so
 * an interrupted job leaves no temporary file behind. */
GPUSORT_API void gpusort_remove_temporary_files(void);

/* For a SIGBUS handler installed with SA_SIGINFO, given info->si_addr: where the address lies
 * in a file a job in this process has mapped (an input another process truncated while it was
 * being read, an output whose storage failed), a one-line message naming the file and saying
 * what happened; NULL otherwise. Async-signal-safe. */
GPUSORT_API const char *gpusort_fault_message(const void *address);

/* ---- Benchmarks -------------------------------------------------------------------------- */

/* Median GPU time of sorting `count` device-resident keys (uniform random unless `distribution`
 * says otherwise; layout: keys or pairs, whose values are the key's index) over `reps` runs
 * after 0.4 s of warm-up, beside a compute-kernel copy of the keys' bytes between two buffers in
 * the same run (the device's own bandwidth), and vkCmdCopyBuffer of the same. The last run's
 * output is checked on the host. */
typedef struct gpusort_bench_result {
  uint32_t struct_size;
  uint32_t passes;
  double sort_seconds;
  double copy_seconds;
  double copy_command_seconds;
  double pass_seconds[8];
  int checked;             /* the output was in key order and a permutation of the input */
  uint32_t tile_invocations;
  uint32_t tile_keys_per_invocation;
  gpusort_sort_algo algo;  /* in: the algorithm to measure (AUTO: the one a sort of `count` keys
                              would run); out: the one measured */
  const char *distribution; /* in: NULL or the keys' distribution, named as in
                               gpusort_generate_options (seed 1) (since 0.7.2) */
  double histogram_seconds; /* the GPU time before the first pass: the state's clearing, and
                               for Onesweep the histogram pass and its scan (since 0.7.16) */
} gpusort_bench_result;

#define GPUSORT_BENCH_RESULT_INIT GPUSORT_OUTPUT_INIT_(gpusort_bench_result)

/* GPUSORT_ERROR_TOO_LARGE when `count` does not fit the device; GPUSORT_ERROR_VERIFY when the
 * check fails (the result is filled then too, `checked` 0). */
GPUSORT_API int gpusort_bench_sort(gpusort_context *ctx, const gpusort_layout *layout, uint64_t count,
                                   uint32_t reps, gpusort_bench_result *result);

/* u32 exclusive sums of `count` uniform random keys: the look-back scan, reduce-then-scan and
 * the textbook Hillis-Steele, Blelloch (global and shared memory) and subgroup-blocked scans,
 * each checked on the host, beside the compute-kernel copy. */
typedef struct gpusort_bench_scan_result {
  uint32_t struct_size;
  uint32_t lookback_tile;  /* elements per look-back tile */
  double copy_seconds;
  uint32_t algorithms;     /* entries used below */
  uint32_t reserved;
  struct {
    char name[48];
    double seconds;
    int checked;
    uint32_t reserved;
  } algorithm[8];
} gpusort_bench_scan_result;

#define GPUSORT_BENCH_SCAN_RESULT_INIT GPUSORT_OUTPUT_INIT_(gpusort_bench_scan_result)

GPUSORT_API int gpusort_bench_scans(gpusort_context *ctx, uint64_t count, uint32_t reps,
                                    gpusort_bench_scan_result *result);

/* The look-back family on `count` device-resident u32 keys, with CUB's benchmark inputs:
 * select and partition of uniform keys (the upper half kept), unique, run-length encoding and
 * reduce-by-key (sum of uniform values) of sorted keys with about count/16 distinct values;
 * one named entry each, checked on the host, beside the compute-kernel copy (lookback_tile:
 * keys per tile). */
GPUSORT_API int gpusort_bench_compact(gpusort_context *ctx, uint64_t count, uint32_t reps,
                                      gpusort_bench_scan_result *result);

#ifdef __cplusplus
}
#endif

#endif
