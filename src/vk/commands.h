/* Command recording and submission with bounded waits, barriers, and timestamp queries.
 *
 * Every wait on the GPU goes through gs_submission_wait, which gives up after
 * gs_device.timeout_ns: a stalled kernel becomes an error naming the stage, and the device
 * is marked wedged so that nothing waits on it again on the way out. */
#ifndef GS_VK_COMMANDS_H
#define GS_VK_COMMANDS_H

#include "vk/device.h"

typedef struct {
  VkCommandBuffer cb;
  VkFence fence;
  bool pending; /* submitted and not yet waited for */
} gs_submission;

int gs_submission_init(gs_device *dev, gs_submission *s);
void gs_submission_destroy(gs_device *dev, gs_submission *s);

/* Resets and begins recording; the submission must not be pending. */
int gs_submission_begin(gs_device *dev, gs_submission *s);

/* Ends recording and submits with the submission's fence. */
int gs_submission_submit(gs_device *dev, gs_submission *s, const char *stage);

/* Waits for a pending submission, at most gs_device.timeout_ns; `stage` names it in errors. */
int gs_submission_wait(gs_device *dev, gs_submission *s, const char *stage);

/* Work recorded into a series of command buffers, so that no submission holds more than the
 * caller lets into one: two submissions alternate, one recording while the other runs.
 * Commands of later submissions are ordered after earlier ones by the barriers each recording
 * starts and ends with (submission order spans submissions on one queue). */
typedef struct {
  gs_submission ring[2];
  int current;
  const char *stage; /* names the work in errors */
} gs_submitter;

int gs_submitter_init(gs_device *dev, gs_submitter *s, const char *stage);
void gs_submitter_destroy(gs_device *dev, gs_submitter *s);

/* Begins the first recording; its command buffer is gs_submitter_cb(). */
int gs_submitter_begin(gs_device *dev, gs_submitter *s);
static inline VkCommandBuffer gs_submitter_cb(const gs_submitter *s) { return s->ring[s->current].cb; }

/* Submits what was recorded and begins a new recording (after the submission before it has
 * finished, whose command buffer it reuses). */
int gs_submitter_flush(gs_device *dev, gs_submitter *s);

/* Submits what was recorded and waits for everything. */
int gs_submitter_finish(gs_device *dev, gs_submitter *s);

/* Makes all earlier compute and transfer writes visible to later compute and transfer work and
 * to indirect dispatches' reads of their group counts. (Vulkan 1.0 barriers: a caller's device
 * need not enable synchronization2.) */
void gs_cmd_barrier(VkCommandBuffer cb);

/* Makes earlier transfer and compute writes visible to host reads after the fence. */
void gs_cmd_barrier_to_host(VkCommandBuffer cb);

/* A pool of timestamp queries; slots are written with gs_timestamps_write and read after
 * the submission that wrote them has finished. */
typedef struct {
  VkQueryPool pool;
  uint32_t count;
} gs_timestamps;

int gs_timestamps_create(gs_device *dev, gs_timestamps *ts, uint32_t count);
void gs_timestamps_destroy(gs_device *dev, gs_timestamps *ts);
void gs_timestamps_reset(gs_device *dev, gs_timestamps *ts);
void gs_timestamps_write(VkCommandBuffer cb, gs_timestamps *ts, uint32_t slot);

/* Reads slots [first, first + count) as raw ticks. */
int gs_timestamps_read(gs_device *dev, gs_timestamps *ts, uint32_t first, uint32_t count, uint64_t *ticks);

/* Seconds between two ticks read from the same queue. */
double gs_timestamps_seconds(const gs_device *dev, uint64_t begin, uint64_t end);

#endif
