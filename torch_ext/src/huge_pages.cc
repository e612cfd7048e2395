#include "huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <ATen/EmptyTensor.h>
#include <c10/core/CPUAllocator.h>

namespace tf::torch_ext {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

bool huge_pages_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TF_HUGE_PAGES");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

// The mapping of one output: unmapped by the DataPtr's deleter.
struct Mapping {
  void* base;
  size_t length;
};

void unmap(void* ctx) {
  auto* m = static_cast<Mapping*>(ctx);
  munmap(m->base, m->length);
  delete m;
}

// A 2 MiB-aligned mapping of at least `bytes`, advised for huge pages; the
// unaligned head and tail of the over-sized reservation are returned at once.
c10::DataPtr map_huge(size_t bytes) {
  const size_t length = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return {};
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  if (const size_t tail = start + length + kHugePage - (aligned + length)) munmap(reinterpret_cast<void*>(aligned + length), tail);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, length, MADV_HUGEPAGE);  // advisory: without THP the pages are simply 4 KiB
  return c10::DataPtr(p, new Mapping{p, length}, &unmap, c10::Device(c10::DeviceType::CPU));
}

}  // namespace

at::Tensor empty_output(c10::IntArrayRef shape, at::ScalarType dtype) {
  const size_t bytes = static_cast<size_t>(c10::multiply_integers(shape)) * c10::elementSize(dtype);
  if (bytes >= kHugeMinBytes && huge_pages_enabled()) {
    if (c10::DataPtr data = map_huge(bytes)) {
      c10::Storage storage(c10::Storage::use_byte_size_t(), bytes, std::move(data), c10::GetCPUAllocator(),
                           /*resizable=*/true);
      auto t = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                        c10::scalarTypeToTypeMeta(dtype));
      t.unsafeGetTensorImpl()->set_sizes_contiguous(shape);
      return t;
    }
  }
  return at::detail::empty_cpu(shape, dtype, /*pin_memory=*/false, /*memory_format_opt=*/c10::nullopt);
}

}  // namespace tf::torch_ext
