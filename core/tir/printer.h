// TIR as readable text (TF_DUMP_DIR's .tir files, test failure messages).
// One statement per line, blocks indented, every binder with its type:
//
//   func add(x: f32*, y: f32*, n: i64) {
//     for (i, 0, n) parallel min_work((n >= 65536)) {
//       y[i] = (x[i] + 1.0f)
//     }
//   }
#pragma once

#include <string>

#include "core/tir/stmt.h"

namespace tf::tir {

std::string to_string(const ExprPtr& e);
std::string to_string(const StmtPtr& s);
std::string to_string(const Function& f);

}  // namespace tf::tir
