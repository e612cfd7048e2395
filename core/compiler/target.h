// What a segment is lowered for. Lowering owns the schedule, and the few
// choices that differ by target are made from this: on the CPU a parallel
// loop gets a serial twin below the work threshold (OpenMP's fork costs
// more than a small loop); on CUDA every parallel loop is a grid.
#pragma once

namespace tf::compiler {

enum class Target { kCpu, kCuda };

}  // namespace tf::compiler
