// Wide memory access for a block-level loop over j (cuda_printer.h): each
// thread takes V consecutive iterations at once, and the rows the body
// reads and writes at exactly j move in one 16-byte load or store per
// thread (8 bytes for the narrower of mixed widths), instead of V scalar
// accesses. A GPU moves memory in 32-byte sectors per warp request; wide
// accesses need a quarter of the requests for f32 and an eighth for the
// half types.
//
// plan_lanes says whether the loop qualifies: every memory access that
// depends on j is at exactly j (a unit-stride row: the specialized fast
// path of a stage), no row is both read and written, stores are not under
// a condition, and the body calls no helper over a row. lane_body is the
// body for lane k of a group starting at j0: loads of a planned row read
// its lane register, stores write its lane register, and j is j0 + k. The
// printer loads the registers before the lanes and stores them after,
// when every row is aligned for its width at the loop's start (a run-time
// test; otherwise, and for the tail, the scalar loop runs).
#pragma once

#include <vector>

#include "core/tir/stmt.h"

namespace tf::compiler::cuda {

// Each planned row with the variables that stand for it in lane bodies.
struct LaneRow {
  tir::VarPtr base;                 // the row's pointer
  std::vector<tir::VarPtr> lanes;   // a load row: lane k's value (one per lane)
  tir::VarPtr registers;            // a store row: the lane registers as a pointer
};

struct LanePlan {
  int lanes = 0;  // V; 0 when the loop is not widened
  std::vector<LaneRow> loads, stores;
};

LanePlan plan_lanes(const tir::For& f);

// The body of f for lane k of the group starting at j0.
tir::StmtPtr lane_body(const tir::For& f, const LanePlan& p, int k, const tir::VarPtr& j0);

}  // namespace tf::compiler::cuda
