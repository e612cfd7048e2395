// The verifier (docs/ir.md, The verifier): the function typing rules and shapes,
// run on every Function when a Module is sealed. It returns nothing and
// throws Error(kVerify) (structural rule) or Error(kType) (typing rule),
// naming the function and the rule.
#pragma once

#include "core/ir/module.h"

namespace tf::sema {

// Checks one top-level function: params are Vars; the body is a single Expr
// whose value can be returned as return_type (core/sema/boundary.h); every
// Var the body uses is one of its params; every Call's stored type is what typeinfer derives; same-name DimVars agree
// on (lo, hi) across params and return type; a top-level function is not a
// variant; a prototype has variants obeying the dispatch rules (dispatch.h;
// each variant is checked too); a loop's carries keep their types and its
// start / extent / step DimVars are bound by the parameter shapes. A call
// to an elaborated instance of a module function is verified in turn.
void verify_function(const ir::Function& fn);

// Verifies every function, then builds the Module (names distinct).
ir::ModulePtr seal(ir::Target target, std::vector<ir::FunctionPtr> functions);

}  // namespace tf::sema
