/* The scan or reduction of host data on the GPU, in chunks of at most `capacity` elements:
 * each chunk is uploaded, scanned from the carry of the chunks before it (the combination of
 * all their elements, kept on the GPU), and handed out in order; a reduction's chunk values
 * are combined on the host, in order. One chunk holds everything up to the device's limits
 * and the budget; larger inputs (files of any size) take several, with the same results for
 * integers and for min and max. Float sums associate within each chunk, so their last bits
 * depend on the chunk size: the same device and budget give the same bits run after run. */
#ifndef GS_JOB_SCAN_ENGINE_H
#define GS_JOB_SCAN_ENGINE_H

#include "io/transfer.h"
#include "job/context.h"
#include "job/sort_engine.h"

typedef struct {
  gs_context *ctx;
  gs_scan_config config;
  const gs_scan *scan;
  uint64_t capacity;  /* elements per chunk */
  uint64_t chunks;    /* scanned so far */
  gs_buffer input, output, state, carry; /* carry: two accumulator slots, used in turn */
  gs_stager staging; /* both ways */
  unsigned char value[8]; /* a reduction's value so far (chunks > 0) */
  /* host arrays of the conversions, for elements or results of other forms (config.in_form,
   * out_form): a chunk's elements read from a file, widened, and a piece of results */
  unsigned char *raw, *wide, *narrow;
  size_t narrow_bytes;
  gs_bytes_sink sink; /* the caller's, behind the conversion of results */
  void *sink_ctx;
  double setup, read, upload, gpu, download, write;
} gs_scan_engine;

/* Bytes of an element as the caller holds it (config.in_form's, else input's), and of a
 * result (out_form's, else acc's). */
unsigned gs_scan_element_bytes(const gs_scan_config *config);
unsigned gs_scan_result_bytes(const gs_scan_config *config);

/* The most elements one chunk takes on the context's device (the budget aside). */
uint64_t gs_scan_engine_max_elements(gs_context *ctx, const gs_scan_config *config);

/* The most elements per chunk within `budget` bytes of device and staging memory, and within
 * one bounded submission. */
uint64_t gs_scan_engine_capacity(gs_context *ctx, const gs_scan_config *config, uint64_t budget);

int gs_scan_engine_init(gs_scan_engine *e, gs_context *ctx, const gs_scan_config *config, uint64_t capacity);

/* Scans the next n (<= capacity) elements and hands their results to sink in order (a
 * reduction hands nothing: see gs_scan_engine_value). The source is as for the sort engine. */
int gs_scan_engine_chunk(gs_scan_engine *e, const gs_record_source *source, uint64_t n, gs_bytes_sink sink,
                         void *sink_ctx);

/* a = a (+, min or max) b, values of the accumulator type: how a reduction's chunk values
 * combine on the host (integer sums wrap at the width; min and max in totalOrder). */
void gs_scan_combine_on_host(gs_scan_op op, gs_key_type acc, unsigned char *a, const unsigned char *b);

/* A reduction's value over every chunk so far (the sum of none is 0). */
void gs_scan_engine_value(const gs_scan_engine *e, void *value);

/* Scans n elements of host memory in as many chunks as the budget needs. */
int gs_scan_engine_all(gs_scan_engine *e, gs_context *ctx, const gs_scan_config *config, const gs_record_source *source,
                       uint64_t n, gs_bytes_sink sink, void *sink_ctx);

void gs_scan_engine_free(gs_scan_engine *e);

#endif
