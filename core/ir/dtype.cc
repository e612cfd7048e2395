#include "core/ir/dtype.h"

namespace tf::ir {
namespace {

struct DTypeRow {
  std::string_view name;
  int bits;
  char category;
};

constexpr DTypeRow kRows[] = {
#define TF_X(e, name, bits, cat) {name, bits, cat},
    TF_DTYPE_LIST(TF_X)
#undef TF_X
};

const DTypeRow& row(DType d) { return kRows[static_cast<int>(d)]; }

}  // namespace

std::string_view dtype_name(DType d) { return row(d).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (size_t i = 0; i < sizeof(kRows) / sizeof(kRows[0]); ++i)
    if (kRows[i].name == name) return static_cast<DType>(i);
  return std::nullopt;
}

int dtype_bits(DType d) { return row(d).bits; }
bool is_float(DType d) { return row(d).category == 'f'; }
bool is_int(DType d) { return row(d).category == 'i' || row(d).category == 'u'; }
bool is_unsigned(DType d) { return row(d).category == 'u'; }
bool is_bool(DType d) { return row(d).category == 'b'; }

}  // namespace tf::ir
