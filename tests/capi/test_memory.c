/* The output pool through the C ABI (tilefoundry.h, "output memory"): a freed
 * block is reused by the next request of its size class, bounded by the cache
 * limit with the least recently freed evicted first; small requests bypass
 * it; misuse is ignored, not a crash; tf_kernel_call hands out pooled
 * outputs; many threads at once never share a live block. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdint.h>

#include "tf_test.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static tf_memory_stats stats(void) {
  tf_memory_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  CHECK_OK(tf_memory_get_stats(&s));
  return s;
}

/* Allocates, checks alignment and writes every byte (the memory is usable). */
static tf_buffer take(size_t bytes, void** data) {
  tf_buffer b = NULL;
  CHECK_OK(tf_buffer_alloc(bytes, &b, data));
  CHECK(b != NULL && *data != NULL);
  CHECK(((uintptr_t)*data) % 64 == 0);
  memset(*data, 0x5A, bytes);
  return b;
}

static void test_environment_sets_the_limit(void) {
  /* main() set TF_MEMORY_CACHE_LIMIT=5M before the pool's first use. */
  CHECK(stats().cache_limit == 5 * MIB);
}

static void test_stats_arguments(void) {
  tf_memory_stats s;
  memset(&s, 0, sizeof s);
  CHECK_STATUS(tf_memory_get_stats(NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_memory_get_stats(&s), TF_ERR_INVALID_ARGUMENT, "struct_size");
  /* An older, shorter struct is filled as far as it goes, and says so. */
  s.struct_size = 8 + 2 * sizeof(uint64_t);
  s.blocks_cached = 12345;
  CHECK_OK(tf_memory_get_stats(&s));
  CHECK(s.struct_size == 8 + 2 * sizeof(uint64_t));
  CHECK(s.blocks_cached == 12345);
}

static void test_a_freed_block_is_reused_by_its_size_class(void) {
  void *p = NULL, *q = NULL, *r = NULL;
  tf_memory_stats before = stats(), after;
  tf_buffer a = take(MIB, &p);
  after = stats();
  CHECK(after.misses == before.misses + 1 && after.hits == before.hits);
  CHECK(after.bytes_in_use == before.bytes_in_use + MIB);
  tf_buffer_free(a);
  after = stats();
  CHECK(after.bytes_in_use == before.bytes_in_use);
  CHECK(after.bytes_cached == before.bytes_cached + MIB && after.blocks_cached == before.blocks_cached + 1);
  /* 1 MiB - 100 bytes rounds to the same class: the same block comes back. */
  a = take(MIB - 100, &q);
  after = stats();
  CHECK(q == p);
  CHECK(after.hits == before.hits + 1 && after.misses == before.misses + 1);
  CHECK(after.bytes_cached == before.bytes_cached);
  /* 1 MiB + 1 is the next class (1.25 MiB): a fresh block. */
  {
    tf_buffer c = take(MIB + 1, &r);
    CHECK(r != q);
    CHECK(stats().misses == before.misses + 2);
    tf_buffer_free(c);
  }
  tf_buffer_free(a);
  CHECK_OK(tf_memory_empty_cache());
  after = stats();
  CHECK(after.bytes_cached == 0 && after.blocks_cached == 0);
  CHECK(after.bytes_released >= before.bytes_released + MIB + MIB + 256 * KIB);
}

static void test_small_requests_bypass_the_pool(void) {
  void *p = NULL, *z = NULL;
  tf_memory_stats before = stats(), after;
  tf_buffer a = take(100, &p), b = take(0, &z);
  after = stats();
  CHECK(after.hits == before.hits && after.misses == before.misses);
  CHECK(after.bytes_in_use == before.bytes_in_use);
  tf_buffer_free(a);
  tf_buffer_free(b);
  CHECK(stats().bytes_cached == before.bytes_cached);
}

static void test_the_least_recently_freed_go_first(void) {
  void *pa = NULL, *pb = NULL, *pc = NULL, *p = NULL;
  tf_buffer a, b, c;
  tf_memory_stats before, after;
  CHECK_OK(tf_memory_empty_cache());
  CHECK_OK(tf_memory_set_cache_limit(3 * MIB));
  before = stats();
  CHECK(before.cache_limit == 3 * MIB);
  a = take(MIB, &pa);
  b = take(2 * MIB, &pb);
  c = take(MIB + MIB / 2, &pc);
  tf_buffer_free(a);
  tf_buffer_free(b);
  CHECK(stats().bytes_cached == 3 * MIB);
  tf_buffer_free(c); /* 4.5 MiB > 3 MiB: a, then b, are evicted */
  after = stats();
  CHECK(after.bytes_cached == MIB + MIB / 2 && after.blocks_cached == 1);
  CHECK(after.bytes_released == before.bytes_released + 3 * MIB);
  c = take(MIB + MIB / 2, &p);
  CHECK(p == pc);
  CHECK(stats().hits == after.hits + 1);
  a = take(MIB, &p);
  CHECK(stats().misses == after.misses + 1);
  tf_buffer_free(a);
  tf_buffer_free(c);
  /* A block larger than the limit is never kept. */
  CHECK_OK(tf_memory_set_cache_limit(MIB));
  after = stats();
  CHECK(after.bytes_cached <= MIB);
  a = take(2 * MIB, &p);
  tf_buffer_free(a);
  CHECK(stats().bytes_cached == after.bytes_cached);
  /* Limit 0: nothing is kept, and what was cached goes at once. */
  CHECK_OK(tf_memory_set_cache_limit(0));
  CHECK(stats().bytes_cached == 0);
  a = take(MIB, &p);
  tf_buffer_free(a);
  CHECK(stats().bytes_cached == 0);
  CHECK_OK(tf_memory_set_cache_limit(64 * MIB));
}

static void test_misuse_is_ignored(void) {
  void* p = NULL;
  int local = 0;
  tf_buffer a;
  tf_memory_stats mid;
  CHECK_STATUS(tf_buffer_alloc(MIB, NULL, &p), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_buffer_alloc(MIB, &a, NULL), TF_ERR_INVALID_ARGUMENT, "data is NULL");
  CHECK_STATUS(tf_buffer_alloc((size_t)-1, &a, &p), TF_ERR_OUT_OF_MEMORY, "cannot allocate");
  a = take(MIB, &p);
  tf_buffer_free(a);
  mid = stats();
  tf_buffer_free(a); /* twice */
  tf_buffer_free(NULL);
  tf_buffer_free((tf_buffer)(void*)&local); /* never allocated */
  CHECK(stats().bytes_cached == mid.bytes_cached && stats().bytes_in_use == mid.bytes_in_use);
  CHECK(stats().blocks_cached == mid.blocks_cached);
}

/* Each worker allocates blocks of a few classes, fills each with its own
 * pattern, and checks the pattern before freeing: a block handed to two
 * owners at once would be overwritten. */
#define WORKERS 4
#define ROUNDS 200

static void* churn(void* arg) {
  int id = *(int*)arg, i, bad = 0;
  for (i = 0; i < ROUNDS; ++i) {
    size_t bytes = (size_t)(128 + 64 * ((i + id) % 5)) * KIB;
    void* p = NULL;
    tf_buffer b = NULL;
    size_t j;
    if (tf_buffer_alloc(bytes, &b, &p) != TF_OK) return (void*)1;
    memset(p, id + 1, bytes);
    for (j = 0; j < bytes; j += 4096) bad |= ((unsigned char*)p)[j] != (unsigned char)(id + 1);
    tf_buffer_free(b);
  }
  return bad ? (void*)1 : NULL;
}

static void test_threads_never_share_a_live_block(void) {
  pthread_t t[WORKERS];
  int ids[WORKERS], i;
  tf_memory_stats before = stats();
  for (i = 0; i < WORKERS; ++i) {
    ids[i] = i;
    CHECK(pthread_create(&t[i], NULL, churn, &ids[i]) == 0);
  }
  for (i = 0; i < WORKERS; ++i) {
    void* r = NULL;
    pthread_join(t[i], &r);
    CHECK(r == NULL);
  }
  CHECK(stats().bytes_in_use == before.bytes_in_use);
  CHECK(stats().hits > before.hits);
}

static const char* kScale =
    "from tilefoundry.dsl import *\n"
    "N = DimVar(\"N\", 1, 4096)\n"
    "@func\n"
    "def scale(x: Tensor[(N, 1024), f32]) -> Tensor[(N, 1024), f32]:\n"
    "    return x * 2.0\n";

static void test_kernel_call_outputs_come_from_the_pool(void) {
  static float x[256 * 1024];
  int64_t shape[2] = {256, 1024};
  DLTensor in;
  DLManagedTensor* out = NULL;
  void* first;
  int32_t backend = -1;
  int i, wrong = 0;
  tf_module m = tf_test_parse(kScale);
  tf_kernel k = tf_test_compile(m, "scale");
  tf_memory_stats before, after;
  for (i = 0; i < 256 * 1024; ++i) x[i] = (float)(i % 97);
  in = tf_test_tensor(x, tf_test_dtype(kDLFloat, 32), 2, shape);
  CHECK_OK(tf_kernel_backend(k, &backend));
  CHECK(backend == TF_BACKEND_NATIVE);
  before = stats();
  CHECK_OK(tf_kernel_call(k, &in, 1, &out, 1));
  after = stats();
  CHECK(after.misses + after.hits == before.misses + before.hits + 1);
  CHECK(after.bytes_in_use == before.bytes_in_use + MIB);
  first = out->dl_tensor.data;
  out->deleter(out);
  CHECK(stats().bytes_in_use == before.bytes_in_use);
  CHECK_OK(tf_kernel_call(k, &in, 1, &out, 1));
  CHECK(out->dl_tensor.data == first);
  CHECK(stats().hits == after.hits + 1);
  for (i = 0; i < 256 * 1024; ++i) wrong += ((float*)out->dl_tensor.data)[i] != 2.0f * x[i];
  CHECK(wrong == 0);
  out->deleter(out);
  tf_kernel_release(k);
  tf_module_release(m);
}

int main(void) {
  setenv("TF_MEMORY_CACHE_LIMIT", "5M", 1);
  test_environment_sets_the_limit();
  CHECK_OK(tf_memory_set_cache_limit(64 * MIB));
  test_stats_arguments();
  test_a_freed_block_is_reused_by_its_size_class();
  test_small_requests_bypass_the_pool();
  test_the_least_recently_freed_go_first();
  test_misuse_is_ignored();
  test_threads_never_share_a_live_block();
  test_kernel_call_outputs_come_from_the_pool();
  TF_TEST_SUMMARY();
}
