#include "core/runtime/buffer_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir/error.h"

namespace tf::runtime {

struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;         // the size class (pooled) or the rounded request (small)
  void* map_base = nullptr;  // the mapping of a pooled block; null for malloc'd
  size_t map_length = 0;
  Buffer* older = nullptr;  // free-list links, oldest free block first
  Buffer* newer = nullptr;
};

namespace {

constexpr size_t kPage = size_t{4} << 10;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kSmallAlignment = 64;

size_t round_up(size_t n, size_t step) { return (n + step - 1) / step * step; }

// Four classes per doubling, in whole pages.
size_t size_class(size_t bytes) {
  const size_t n = round_up(bytes, kPage);
  const int log2 = 63 - __builtin_clzll(static_cast<unsigned long long>(n));
  const size_t step = std::max(kPage, (size_t{1} << log2) / 4);
  return round_up(n, step);
}

bool huge_pages_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TF_HUGE_PAGES");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

// "512M", "2G", "1048576"; false when malformed.
bool parse_bytes(const char* text, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || errno != 0 || text[0] == '-') return false;
  uint64_t scale = 1;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case '\0': break;
    case 'K': scale = uint64_t{1} << 10; ++end; break;
    case 'M': scale = uint64_t{1} << 20; ++end; break;
    case 'G': scale = uint64_t{1} << 30; ++end; break;
    default: return false;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0' || v > std::numeric_limits<uint64_t>::max() / scale) return false;
  *out = v * scale;
  return true;
}

// 1/8 of physical memory, at most 4 GiB: room for a layer's working set of
// large activations without holding a noticeable share of the machine.
uint64_t default_limit() {
  if (const char* v = std::getenv("TF_MEMORY_CACHE_LIMIT")) {
    uint64_t bytes = 0;
    if (parse_bytes(v, &bytes)) return bytes;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t physical = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : uint64_t{8} << 30;
  return std::min<uint64_t>(physical / 8, uint64_t{4} << 30);
}

// A fresh anonymous mapping of `length` bytes (a size class); huge-page
// sized classes are 2 MiB aligned so that THP can back them.
bool map_block(Buffer* b, size_t length) {
  const bool huge = length >= kHugeMinBytes && huge_pages_enabled();
  const size_t slack = huge ? kHugePage : 0;
  void* raw = mmap(nullptr, length + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return false;
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = start;
  if (huge) {
    aligned = (start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
    if (aligned > start) munmap(raw, aligned - start);
    if (const size_t tail = start + length + slack - (aligned + length))
      munmap(reinterpret_cast<void*>(aligned + length), tail);
    madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // advisory
  }
  b->map_base = b->data = reinterpret_cast<void*>(aligned);
  b->map_length = b->bytes = length;
  return true;
}

// Gives b's memory back: its mapping (pooled) or to malloc (small).
void destroy(Buffer* b) {
  if (b->map_base != nullptr) {
    munmap(b->map_base, b->map_length);
  } else {
    std::free(b->data);
  }
  delete b;
}

class Pool {
 public:
  Pool() : limit_(default_limit()) {}

  Buffer* allocate(size_t bytes, void** data) {
    auto* b = bytes < kMinPooledBytes ? allocate_small(bytes) : allocate_pooled(bytes);
    *data = b->data;
    return b;
  }

  void release(Buffer* b) {
    std::vector<Buffer*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (b == nullptr || live_.erase(b) == 0) return;
      if (b->map_base == nullptr) {
        evicted.push_back(b);  // small: malloc'ed, freed below, outside the lock
      } else {
        keep_or_evict(b, &evicted);
      }
    }
    for (Buffer* e : evicted) destroy(e);
  }

  bool is_live(const Buffer* b) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.count(const_cast<Buffer*>(b)) != 0;
  }

  PoolStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    PoolStats s = stats_;
    s.cache_limit = limit_;
    return s;
  }

  void set_limit(uint64_t bytes) { trim(bytes, /*new_limit=*/true); }
  uint64_t limit() {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }
  void empty() { trim(0, /*new_limit=*/false); }

 private:
  // Under mu_: caches the pooled block b, or hands it (and what it pushes
  // past the limit) to *evicted.
  void keep_or_evict(Buffer* b, std::vector<Buffer*>* evicted) {
    stats_.bytes_in_use -= b->bytes;
    if (b->bytes > limit_) {
      evicted->push_back(b);
    } else {
      keep(b);
      evict_to(limit_, evicted);
    }
    for (Buffer* e : *evicted) stats_.bytes_released += e->bytes;
  }


  Buffer* allocate_small(size_t bytes) {
    const size_t n = std::max(round_up(bytes, kSmallAlignment), kSmallAlignment);
    void* p = std::aligned_alloc(kSmallAlignment, n);
    if (p == nullptr) ir::fail(ir::ErrorKind::kOutOfMemory, "cannot allocate " + std::to_string(bytes) + " bytes");
    auto* b = new Buffer{p, n};
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(b);
    return b;
  }

  Buffer* allocate_pooled(size_t bytes) {
    if (bytes > std::numeric_limits<size_t>::max() / 4)
      ir::fail(ir::ErrorKind::kOutOfMemory, "cannot allocate " + std::to_string(bytes) + " bytes");
    const size_t cls = size_class(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (Buffer* b = take(cls)) {
        ++stats_.hits;
        return hand_out(b);
      }
      ++stats_.misses;
    }
    auto* b = new Buffer;
    if (!map_block(b, cls)) {
      empty();  // the cache may hold what the OS cannot give
      if (!map_block(b, cls)) {
        delete b;
        ir::fail(ir::ErrorKind::kOutOfMemory, "cannot map " + std::to_string(cls) + " bytes for an output");
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    return hand_out(b);
  }

  // Under mu_.
  Buffer* hand_out(Buffer* b) {
    stats_.bytes_in_use += b->bytes;
    live_.insert(b);
    return b;
  }

  // Under mu_: the most recently freed block of class cls, unlinked.
  Buffer* take(size_t cls) {
    auto it = by_class_.find(cls);
    if (it == by_class_.end() || it->second.empty()) return nullptr;
    Buffer* b = it->second.back();
    it->second.pop_back();
    unlink(b);
    return b;
  }

  // Under mu_: b joins the free list (newest end) and its class's stack.
  void keep(Buffer* b) {
    b->older = newest_;
    b->newer = nullptr;
    (newest_ ? newest_->newer : oldest_) = b;
    newest_ = b;
    by_class_[b->bytes].push_back(b);
    stats_.bytes_cached += b->bytes;
    ++stats_.blocks_cached;
  }

  // Under mu_: removes b from the free list (not from its class's stack).
  void unlink(Buffer* b) {
    (b->older ? b->older->newer : oldest_) = b->newer;
    (b->newer ? b->newer->older : newest_) = b->older;
    b->older = b->newer = nullptr;
    stats_.bytes_cached -= b->bytes;
    --stats_.blocks_cached;
  }

  // Under mu_: drops the oldest free blocks until at most `bytes` are cached.
  void evict_to(uint64_t bytes, std::vector<Buffer*>* out) {
    while (oldest_ != nullptr && stats_.bytes_cached > bytes) {
      Buffer* b = oldest_;
      auto& stack = by_class_[b->bytes];
      stack.erase(std::find(stack.begin(), stack.end(), b));
      unlink(b);
      out->push_back(b);
    }
  }

  void trim(uint64_t bytes, bool new_limit) {
    std::vector<Buffer*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (new_limit) limit_ = bytes;
      evict_to(bytes, &evicted);
      for (Buffer* e : evicted) stats_.bytes_released += e->bytes;
    }
    for (Buffer* e : evicted) destroy(e);
  }

  std::mutex mu_;
  uint64_t limit_;
  PoolStats stats_;
  std::unordered_set<Buffer*> live_;
  std::unordered_map<size_t, std::vector<Buffer*>> by_class_;
  Buffer* oldest_ = nullptr;
  Buffer* newest_ = nullptr;
};

// Never destroyed: buffers may be released from static destructors (a
// tensor held by a global) after this translation unit's statics are gone.
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

}  // namespace

Buffer* buffer_allocate(size_t bytes, void** data) { return pool().allocate(bytes, data); }
void buffer_release(Buffer* b) { pool().release(b); }
bool buffer_is_live(const Buffer* b) { return b != nullptr && pool().is_live(b); }
PoolStats pool_stats() { return pool().stats(); }
void set_cache_limit(uint64_t bytes) { pool().set_limit(bytes); }
uint64_t cache_limit() { return pool().limit(); }
void empty_cache() { pool().empty(); }

}  // namespace tf::runtime
