#include "util/parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/knobs.h"

enum { MAX_THREADS = 16 };

static unsigned thread_count;
static pthread_once_t thread_count_once = PTHREAD_ONCE_INIT;

static void count_threads(void) {
  unsigned n = gs_knobs_get()->threads;
  if (n == 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    n = cpus > 0 ? (unsigned)cpus : 1;
  }
  thread_count = n > MAX_THREADS ? MAX_THREADS : n;
}

unsigned gs_parallel_threads(void) {
  pthread_once(&thread_count_once, count_threads);
  return thread_count;
}

typedef struct {
  void (*fn)(void *, size_t, size_t, unsigned);
  void *ctx;
  size_t begin, end;
  unsigned worker;
} range_job;

static void *run_job(void *arg) {
  range_job *job = arg;
  job->fn(job->ctx, job->begin, job->end, job->worker);
  return NULL;
}

void gs_parallel_for(size_t count, size_t grain,
                     void (*fn)(void *ctx, size_t begin, size_t end, unsigned worker), void *ctx) {
  if (count == 0) return;
  if (grain == 0) grain = 1;
  size_t jobs = (count + grain - 1) / grain;
  unsigned threads = gs_parallel_threads();
  if (jobs > threads) jobs = threads;
  if (jobs <= 1) {
    fn(ctx, 0, count, 0);
    return;
  }
  range_job job[MAX_THREADS];
  pthread_t tid[MAX_THREADS];
  int spawned[MAX_THREADS] = {0};
  size_t per = (count + jobs - 1) / jobs;
  size_t used = 0;
  for (size_t j = 0; j < jobs && j * per < count; j++, used++) {
    size_t b = j * per, e = b + per < count ? b + per : count;
    job[j] = (range_job){fn, ctx, b, e, (unsigned)j};
    /* Range 0 runs on the calling thread, after the others have started. */
    if (j > 0) spawned[j] = pthread_create(&tid[j], NULL, run_job, &job[j]) == 0;
  }
  run_job(&job[0]);
  for (size_t j = 1; j < used; j++) {
    if (spawned[j])
      pthread_join(tid[j], NULL);
    else
      run_job(&job[j]); /* no thread could be made: do the range here */
  }
}

typedef struct {
  unsigned char *dst;
  const unsigned char *src;
} copy_ctx;

static void copy_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  copy_ctx *c = arg;
  memcpy(c->dst + begin, c->src + begin, end - begin);
}

void gs_parallel_memcpy(void *dst, const void *src, size_t bytes) {
  copy_ctx c = {dst, src};
  gs_parallel_for(bytes, (size_t)4 << 20, copy_range, &c);
}

typedef struct {
  void (*fn)(void *);
  void *ctx;
} task;

static void *run_task(void *arg) {
  task *t = arg;
  t->fn(t->ctx);
  return NULL;
}

void gs_run_both(void (*first)(void *), void *first_ctx, void (*second)(void *), void *second_ctx) {
  task t = {first, first_ctx};
  pthread_t tid;
  const int spawned = pthread_create(&tid, NULL, run_task, &t) == 0;
  second(second_ctx);
  if (spawned)
    pthread_join(tid, NULL);
  else
    first(first_ctx);
}
