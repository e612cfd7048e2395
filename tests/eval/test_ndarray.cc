#include <cmath>
#include <cstdint>
#include <limits>

#include "eval_helpers.h"

namespace tf::evaltest {
namespace {

using runtime::BFloat16;
using runtime::Half;

TEST(NDArray, EmptyIsZeroFilledAlignedAndContiguous) {
  NDArray a = NDArray::empty(DType::kF32, {3, 5});
  EXPECT_EQ(a.numel(), 15);
  EXPECT_EQ(a.strides(), (std::vector<int64_t>{5, 1}));
  EXPECT_TRUE(a.is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (double v : values<float>(a)) EXPECT_EQ(v, 0.0);
}

TEST(NDArray, EmptyOfZeroSizeHasValidData) {
  NDArray a = NDArray::empty(DType::kI64, {0, 4});
  EXPECT_EQ(a.numel(), 0);
  EXPECT_NE(a.data(), nullptr);
  EXPECT_TRUE(a.is_contiguous());
}

TEST(NDArray, EmptyRejectsNegativeExtentAndHugeSizes) {
  expect_error([] { NDArray::empty(DType::kF32, {-1}); }, ir::ErrorKind::kInvalidArgument, "negative");
  expect_error([] { NDArray::empty(DType::kF32, {int64_t(1) << 40, int64_t(1) << 40}); },
               ir::ErrorKind::kOutOfMemory, "overflows");
}

TEST(NDArray, FromDlpackAppliesByteOffsetAndStrides) {
  // A 2x3 view of a 4x4 buffer starting at element (1, 1) with a column step of 1.
  std::vector<float> buf(16);
  for (int i = 0; i < 16; ++i) buf[i] = static_cast<float>(i);
  int64_t shape[] = {2, 3};
  int64_t strides[] = {4, 1};
  DLTensor t{};
  t.data = buf.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 5 * sizeof(float);
  NDArray a = NDArray::from_dlpack(t);
  EXPECT_EQ(a.data(), buf.data() + 5);  // borrowed, never copied
  EXPECT_FALSE(a.is_contiguous());
  NDArray c = NDArray::empty(DType::kF32, {2, 3});
  a.copy_to(c);
  EXPECT_EQ(values<float>(c), (std::vector<double>{5, 6, 7, 9, 10, 11}));
}

TEST(NDArray, FromDlpackNullStridesAreCompact) {
  std::vector<int32_t> buf = {1, 2, 3, 4, 5, 6};
  int64_t shape[] = {3, 2};
  DLTensor t{};
  t.data = buf.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLInt, 32, 1};
  t.shape = shape;
  NDArray a = NDArray::from_dlpack(t);
  EXPECT_EQ(a.strides(), (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(a.is_contiguous());
  EXPECT_EQ(a.dtype(), DType::kI32);
}

TEST(NDArray, FromDlpackZeroSizeMayHaveNullData) {
  int64_t shape[] = {0, 3};
  DLTensor t{};
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  NDArray a = NDArray::from_dlpack(t);
  EXPECT_EQ(a.numel(), 0);
  NDArray c = NDArray::empty(DType::kF32, {0, 3});
  a.copy_to(c);  // copies nothing, does not touch the NULL pointer
}

TEST(NDArray, FromDlpackRejectsNonCpuDeviceLanesAndNullData) {
  float x = 0;
  int64_t shape[] = {1};
  DLTensor t{};
  t.data = &x;
  t.device = {kDLCUDA, 1};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  expect_error([&] { NDArray::from_dlpack(t); }, ir::ErrorKind::kUnsupported, "cuda:1");
  t.device = {kDLCPU, 0};
  t.dtype.lanes = 4;
  expect_error([&] { NDArray::from_dlpack(t); }, ir::ErrorKind::kUnsupported, "lanes");
  t.dtype.lanes = 1;
  t.data = nullptr;
  expect_error([&] { NDArray::from_dlpack(t); }, ir::ErrorKind::kInvalidArgument, "NULL");
}

TEST(NDArray, DtypeMappingRoundTripsAndSpellsBoolAndU8AsDlpackDoes) {
  for (DType d : {DType::kBool, DType::kU8, DType::kI8, DType::kI32, DType::kI64, DType::kF16, DType::kBF16,
                  DType::kF32, DType::kF64})
    EXPECT_EQ(runtime::dtype_from_dl(runtime::dtype_to_dl(d)), d) << ir::dtype_name(d);
  DLDataType b = runtime::dtype_to_dl(DType::kBool);
  EXPECT_EQ(b.code, 6);  // kDLBool (DLPack >= 0.8)
  EXPECT_EQ(b.bits, 8);
  DLDataType u = runtime::dtype_to_dl(DType::kU8);
  EXPECT_EQ(u.code, kDLUInt);
  EXPECT_EQ(u.bits, 8);
  EXPECT_EQ(runtime::dtype_from_dl(DLDataType{kDLUInt, 8, 1}), DType::kU8);  // never bool: DLPack's uint8
  expect_error([] { runtime::dtype_from_dl(DLDataType{kDLUInt, 16, 1}); }, ir::ErrorKind::kUnsupported,
               "unsupported DLPack dtype");
  expect_error([] { runtime::dtype_to_dl(DType::kF4E2M1); }, ir::ErrorKind::kUnsupported, "f4e2m1");
  EXPECT_EQ(runtime::dtype_from_dl(runtime::dtype_to_dl(DType::kFP8E4M3)), DType::kFP8E4M3);  // DLPack 1.1 codes
  EXPECT_EQ(runtime::dtype_from_dl(runtime::dtype_to_dl(DType::kF8E8M0)), DType::kF8E8M0);
}

TEST(NDArray, CopyToStridedDestinationAndToDltensor) {
  NDArray src = f32({2, 2}, {1, 2, 3, 4});
  NDArray dst = NDArray::empty(DType::kF32, {2, 2});
  NDArray dst_t = NDArray::view(dst, {2, 2}, {1, 2});  // column-major view
  src.copy_to(dst_t);
  EXPECT_EQ(values<float>(dst), (std::vector<double>{1, 3, 2, 4}));
  DLTensor t = dst_t.to_dltensor();
  EXPECT_EQ(t.ndim, 2);
  EXPECT_EQ(t.strides[0], 1);
  EXPECT_EQ(t.strides[1], 2);
  EXPECT_EQ(t.data, dst.data());
  expect_error([&] { src.copy_to(NDArray::empty(DType::kF32, {4})); }, ir::ErrorKind::kInvalidArgument,
               "shape");
}

TEST(NDArray, IsContiguousIgnoresSizeOneStrides) {
  NDArray a = NDArray::empty(DType::kF32, {4, 1, 3});
  EXPECT_TRUE(NDArray::view(a, {4, 1, 3}, {3, 999, 1}).is_contiguous());
  EXPECT_FALSE(NDArray::view(a, {3, 4}, {1, 3}).is_contiguous());
}

TEST(Half, KnownEncodingsAndRoundToNearestEven) {
  EXPECT_EQ(Half::from_float(1.0f).bits, 0x3C00);
  EXPECT_EQ(Half::from_float(-2.0f).bits, 0xC000);
  EXPECT_EQ(Half::from_float(65504.0f).bits, 0x7BFF);
  EXPECT_EQ(Half::from_float(65520.0f).bits, 0x7C00);  // rounds up to inf
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(Half::from_float(1.0f + std::ldexp(1.0f, -11)).bits, 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties to even (odd mantissa rounds up).
  EXPECT_EQ(Half::from_float(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3C02);
  EXPECT_EQ(Half::from_float(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half{0x0001}.to_float(), std::ldexp(1.0f, -24));
  EXPECT_EQ(Half{0x3555}.to_float(), 0.333251953125f);
  EXPECT_TRUE(std::isnan(Half::from_float(std::numeric_limits<float>::quiet_NaN()).to_float()));
  EXPECT_EQ(Half::from_float(-std::numeric_limits<float>::quiet_NaN()).bits & 0x8000, 0x8000);
}

TEST(BFloat16, KnownEncodingsAndRoundToNearestEven) {
  EXPECT_EQ(BFloat16::from_float(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16::from_float(1.0f + std::ldexp(1.0f, -8)).bits, 0x3F80);      // tie -> even
  EXPECT_EQ(BFloat16::from_float(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3F82);  // tie -> even
  EXPECT_EQ(BFloat16::from_float(1.0f + std::ldexp(1.0f, -7) + std::ldexp(1.0f, -9)).bits, 0x3F81);
  EXPECT_EQ(BFloat16{0x4049}.to_float(), 3.140625f);
  EXPECT_EQ(BFloat16::from_float(std::numeric_limits<float>::quiet_NaN()).bits, 0x7FC0);
}

}  // namespace
}  // namespace tf::evaltest
