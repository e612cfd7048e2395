// Which sanitizer this translation unit is built with: TF_UNDER_ASAN,
// TF_UNDER_TSAN. GCC says it with __SANITIZE_*__, clang with
// __has_feature; code that must behave differently under one (libgomp and
// NVRTC are not instrumented) asks here rather than each file asking both.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TF_UNDER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define TF_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TF_UNDER_ASAN)
#define TF_UNDER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(TF_UNDER_TSAN)
#define TF_UNDER_TSAN 1
#endif
