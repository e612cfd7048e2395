/* Shapes as data (tf_kernel_output_type, tf_kernel_input_axis,
 * tf_kernel_input_extent, tf_kernel_output_extent): the programs of static,
 * DimVar and expression extents, word for word; the rules and programs,
 * evaluated here, accept exactly the input shapes tf_kernel_output_desc
 * accepts and give exactly its output shapes; and every error path returns
 * its status and writes nothing. */
#include <stddef.h>

#include "tf_test.h"

static const char* kSrc =
    "from tilefoundry.dsl import *\n"
    "\n"
    "N = DimVar(\"N\", 1, 6)\n"
    "M = DimVar(\"M\", 2, 5)\n"
    "Q = DimVar(\"Q\", 0, 4)\n"
    "\n"
    "@func\n"
    "def fixed(x: Tensor[(4, 3), f32]) -> Tensor[(4, 3), f32]:\n"
    "    return x + x\n"
    "\n"
    "@func\n"
    "def norm(x: Tensor[(N, 4), f32], w: Tensor[(4,), f32]) -> Tensor[(N, 4), f32]:\n"
    "    return rms_norm(x, w, eps=1e-6)\n"
    "\n"
    "@func\n"
    "def pad(x: Tensor[(N, 4), f32]) -> tuple[Tensor[(N * 2, 4), f32], "
    "Tensor[(N // 2 + 1,), i32], Tensor[(dim_min(N, 3), 4), f32]]:\n"
    "    return zeros((N * 2, 4), f32), zeros((N // 2 + 1,), i32), x[:dim_min(N, 3), :]\n"
    "\n"
    "@func\n"
    "def rules(a: Tensor[(N, 3), f32], b: Tensor[(N, N * 2 - 1), f32], c: Tensor[(M,), f32]\n"
    "          ) -> tuple[Tensor[(dim_max(N, M) % 4, M // 2 + 1), f64], Tensor[(N + M,), i64]]:\n"
    "    return zeros((dim_max(N, M) % 4, M // 2 + 1), f64), zeros((N + M,), i64)\n"
    "\n"
    "@func\n"
    "def late(b: Tensor[(M + 1,), f32], a: Tensor[(M,), f32]) -> Tensor[(M + 1,), f32]:\n"
    "    return b\n"
    "\n"
    "@func\n"
    "def divide(x: Tensor[(N,), f32], y: Tensor[(Q,), f32]\n"
    "           ) -> tuple[Tensor[(N // Q,), f32], Tensor[(N % Q,), f32]]:\n"
    "    return zeros((N // Q,), f32), zeros((N % Q,), f32)\n";

#define MAX_WORDS 64

/* floor(a / b) and a - floor(a / b) * b, as the header specifies. */
static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

/* Runs a dim program on the input shapes. 0 when it fails (a zero divisor, a
 * malformed program), 1 with *out set otherwise. */
static int eval_program(const int64_t* p, size_t n, int64_t* const* shapes, int64_t* out) {
  int64_t stack[MAX_WORDS];
  size_t sp = 0, pc = 0;
  while (pc < n) {
    int64_t op = p[pc++], a, b, r;
    if (op == TF_DIM_OP_PUSH_CONST) {
      if (pc + 1 > n) return 0;
      stack[sp++] = p[pc++];
      continue;
    }
    if (op == TF_DIM_OP_PUSH_INPUT_EXTENT) {
      if (pc + 2 > n) return 0;
      stack[sp++] = shapes[p[pc]][p[pc + 1]];
      pc += 2;
      continue;
    }
    if (sp < 2) return 0;
    b = stack[--sp];
    a = stack[--sp];
    switch (op) {
      case TF_DIM_OP_ADD: r = a + b; break;
      case TF_DIM_OP_SUB: r = a - b; break;
      case TF_DIM_OP_MUL: r = a * b; break;
      case TF_DIM_OP_FLOORDIV:
        if (b == 0) return 0;
        r = floordiv(a, b);
        break;
      case TF_DIM_OP_MOD:
        if (b == 0) return 0;
        r = a - floordiv(a, b) * b;
        break;
      case TF_DIM_OP_MIN: r = a < b ? a : b; break;
      case TF_DIM_OP_MAX: r = a > b ? a : b; break;
      default: return 0;
    }
    stack[sp++] = r;
  }
  if (sp != 1) return 0;
  *out = stack[0];
  return 1;
}

static tf_kernel compile_evaluator(tf_module m, const char* fn) {
  tf_compile_options opts;
  tf_kernel k = NULL;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.backend = TF_BACKEND_EVALUATOR; /* shapes only: no C++ compiler needed */
  if (tf_kernel_compile(m, fn, &opts, &k) != TF_OK) {
    fprintf(stderr, "cannot compile %s: %s\n", fn, tf_last_error());
    exit(1);
  }
  return k;
}

/* The program of input (output = 0) or output (output = 1) i, axis; its
 * length is asked first, then it is fetched into words (MAX_WORDS). */
static size_t program(tf_kernel k, int output, size_t i, size_t axis, int64_t* words) {
  size_t len = 12345, got = 0;
  tf_status s = output ? tf_kernel_output_extent(k, i, axis, NULL, 0, &len)
                       : tf_kernel_input_extent(k, i, axis, NULL, 0, &len);
  CHECK_OK(s);
  CHECK(len > 0 && len <= MAX_WORDS);
  if (s != TF_OK || len == 0 || len > MAX_WORDS) return 0;
  s = output ? tf_kernel_output_extent(k, i, axis, words, MAX_WORDS, &got)
             : tf_kernel_input_extent(k, i, axis, words, MAX_WORDS, &got);
  CHECK_OK(s);
  CHECK(got == len);
  return got;
}

static int same_words(const int64_t* got, size_t n, const int64_t* want, size_t n_want) {
  return n == n_want && memcmp(got, want, n * sizeof *got) == 0;
}

#define SAME_WORDS(got, n, ...)                                       \
  do {                                                                \
    static const int64_t want_[] = {__VA_ARGS__};                     \
    CHECK(same_words(got, n, want_, sizeof want_ / sizeof want_[0])); \
  } while (0)

static tf_input_axis input_axis(tf_kernel k, size_t i, size_t axis) {
  tf_input_axis r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  CHECK_OK(tf_kernel_input_axis(k, i, axis, &r));
  CHECK(r.struct_size == sizeof r);
  return r;
}

static void test_static(tf_module m) {
  tf_kernel k = compile_evaluator(m, "fixed");
  int64_t w[MAX_WORDS];
  size_t n;
  DLDataType dt;
  int32_t ndim = -1;
  tf_input_axis r = input_axis(k, 0, 1);

  CHECK(r.rule == TF_AXIS_STATIC && r.value == 3 && r.lo == 0 && r.hi == 0);
  CHECK(r.dimvar_input == -1 && r.dimvar_axis == -1);
  n = program(k, 0, 0, 1, w);
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_CONST, 3);
  CHECK_OK(tf_kernel_output_type(k, 0, &dt, &ndim));
  CHECK(dt.code == kDLFloat && dt.bits == 32 && dt.lanes == 1 && ndim == 2);
  n = program(k, 1, 0, 0, w);
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_CONST, 4);
  tf_kernel_release(k);
}

static void test_dimvar(tf_module m) {
  tf_kernel k = compile_evaluator(m, "norm");
  int64_t w[MAX_WORDS];
  size_t n;
  tf_input_axis r = input_axis(k, 0, 0);

  CHECK(r.rule == TF_AXIS_BINDS_DIMVAR && r.lo == 1 && r.hi == 6 && r.value == 0);
  CHECK(r.dimvar_input == 0 && r.dimvar_axis == 0);
  n = program(k, 0, 0, 0, w); /* the binding axis: itself */
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0);
  r = input_axis(k, 1, 0);
  CHECK(r.rule == TF_AXIS_STATIC && r.value == 4);
  n = program(k, 1, 0, 0, w);
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0);
  n = program(k, 1, 0, 1, w);
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_CONST, 4);
  tf_kernel_release(k);
}

static void test_expressions_and_several_outputs(tf_module m) {
  tf_kernel k = compile_evaluator(m, "pad");
  int64_t w[MAX_WORDS];
  size_t n, outs = 0;
  DLDataType dt;
  int32_t ndim = -1;

  CHECK_OK(tf_kernel_num_outputs(k, &outs));
  CHECK(outs == 3);
  n = program(k, 1, 0, 0, w); /* N * 2 */
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0, TF_DIM_OP_PUSH_CONST, 2, TF_DIM_OP_MUL);
  n = program(k, 1, 1, 0, w); /* N // 2 + 1 */
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0, TF_DIM_OP_PUSH_CONST, 2, TF_DIM_OP_FLOORDIV,
             TF_DIM_OP_PUSH_CONST, 1, TF_DIM_OP_ADD);
  n = program(k, 1, 2, 0, w); /* dim_min(N, 3) */
  SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0, TF_DIM_OP_PUSH_CONST, 3, TF_DIM_OP_MIN);
  CHECK_OK(tf_kernel_output_type(k, 1, &dt, &ndim));
  CHECK(dt.code == kDLInt && dt.bits == 32 && ndim == 1);
  CHECK_OK(tf_kernel_output_type(k, 2, &dt, &ndim));
  CHECK(dt.code == kDLFloat && dt.bits == 32 && ndim == 2);
  tf_kernel_release(k);

  /* Every rule in one signature: a(N, 3), b(N, N * 2 - 1), c(M). */
  k = compile_evaluator(m, "rules");
  {
    tf_input_axis r = input_axis(k, 1, 0);
    CHECK(r.rule == TF_AXIS_EQUALS_DIMVAR && r.lo == 1 && r.hi == 6);
    CHECK(r.dimvar_input == 0 && r.dimvar_axis == 0);
    n = program(k, 0, 1, 0, w);
    SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0);
    r = input_axis(k, 1, 1);
    CHECK(r.rule == TF_AXIS_EXPR && r.value == 0 && r.dimvar_input == -1 && r.dimvar_axis == -1);
    n = program(k, 0, 1, 1, w);
    SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0, TF_DIM_OP_PUSH_CONST, 2, TF_DIM_OP_MUL,
               TF_DIM_OP_PUSH_CONST, 1, TF_DIM_OP_SUB);
    r = input_axis(k, 2, 0);
    CHECK(r.rule == TF_AXIS_BINDS_DIMVAR && r.lo == 2 && r.hi == 5);
    CHECK(r.dimvar_input == 2 && r.dimvar_axis == 0);
    n = program(k, 1, 0, 0, w); /* dim_max(N, M) % 4 */
    SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 0, 0, TF_DIM_OP_PUSH_INPUT_EXTENT, 2, 0,
               TF_DIM_OP_MAX, TF_DIM_OP_PUSH_CONST, 4, TF_DIM_OP_MOD);
    CHECK_OK(tf_kernel_output_type(k, 1, &dt, &ndim));
    CHECK(dt.code == kDLInt && dt.bits == 64 && ndim == 1);
  }
  tf_kernel_release(k);

  /* An expression input axis over a DimVar that a later input binds. */
  k = compile_evaluator(m, "late");
  {
    tf_input_axis r = input_axis(k, 0, 0);
    CHECK(r.rule == TF_AXIS_EXPR && r.dimvar_input == -1 && r.lo == 0 && r.hi == 0);
    n = program(k, 0, 0, 0, w);
    SAME_WORDS(w, n, TF_DIM_OP_PUSH_INPUT_EXTENT, 1, 0, TF_DIM_OP_PUSH_CONST, 1, TF_DIM_OP_ADD);
    r = input_axis(k, 1, 0);
    CHECK(r.rule == TF_AXIS_BINDS_DIMVAR && r.lo == 2 && r.hi == 5);
    CHECK(r.dimvar_input == 1 && r.dimvar_axis == 0);
  }
  tf_kernel_release(k);
}

/* A kernel's rules and programs, fetched once. */
typedef struct {
  size_t n_in, n_out;
  int32_t in_rank[4], out_rank[4];
  tf_input_axis axis[4][TF_MAX_NDIM];
  int64_t in_prog[4][TF_MAX_NDIM][MAX_WORDS], out_prog[4][TF_MAX_NDIM][MAX_WORDS];
  size_t in_len[4][TF_MAX_NDIM], out_len[4][TF_MAX_NDIM];
} rule_set;

static void fetch_rules(tf_kernel k, rule_set* rs) {
  size_t i, a;
  DLDataType dt;
  CHECK_OK(tf_kernel_num_inputs(k, &rs->n_in));
  CHECK_OK(tf_kernel_num_outputs(k, &rs->n_out));
  for (i = 0; i < rs->n_in; ++i) {
    CHECK_OK(tf_kernel_input_desc(k, i, &dt, &rs->in_rank[i]));
    for (a = 0; a < (size_t)rs->in_rank[i]; ++a) {
      rs->axis[i][a] = input_axis(k, i, a);
      rs->in_len[i][a] = program(k, 0, i, a, rs->in_prog[i][a]);
    }
  }
  for (i = 0; i < rs->n_out; ++i) {
    CHECK_OK(tf_kernel_output_type(k, i, &dt, &rs->out_rank[i]));
    for (a = 0; a < (size_t)rs->out_rank[i]; ++a)
      rs->out_len[i][a] = program(k, 1, i, a, rs->out_prog[i][a]);
  }
}

/* Whether the rules accept these input shapes, checked the way a client
 * would; out[o][axis] receives the output shapes. */
static int rules_accept(const rule_set* rs, int64_t* const* shapes, int64_t out[][TF_MAX_NDIM]) {
  int64_t v;
  size_t i, o, a;
  int ok = 1;
  for (i = 0; i < rs->n_in; ++i) {
    for (a = 0; a < (size_t)rs->in_rank[i]; ++a) {
      const tf_input_axis* r = &rs->axis[i][a];
      int64_t e = shapes[i][a];
      if (r->rule == TF_AXIS_BINDS_DIMVAR || r->rule == TF_AXIS_EQUALS_DIMVAR)
        ok = ok && r->lo <= e && e < r->hi;
      if (r->rule == TF_AXIS_STATIC) ok = ok && e == r->value;
      if (r->rule == TF_AXIS_EQUALS_DIMVAR) ok = ok && e == shapes[r->dimvar_input][r->dimvar_axis];
      /* The program says the same for every rule (a tautology where a DimVar is bound). */
      ok = ok && eval_program(rs->in_prog[i][a], rs->in_len[i][a], shapes, &v) && v == e;
    }
  }
  for (o = 0; ok && o < rs->n_out; ++o) {
    for (a = 0; ok && a < (size_t)rs->out_rank[o]; ++a)
      ok =
          eval_program(rs->out_prog[o][a], rs->out_len[o][a], shapes, &out[o][a]) && out[o][a] >= 0;
  }
  return ok;
}

/* Every combination of extents in [0, limit) on the inputs' axes: the rules
 * accept a combination exactly when tf_kernel_output_desc does, and then give
 * its shapes. */
static void check_against_output_desc(tf_module m, const char* fn, int64_t limit) {
  static rule_set rs;
  tf_kernel k = compile_evaluator(m, fn);
  int64_t storage[4][TF_MAX_NDIM], *shapes[4], want[TF_MAX_NDIM], got[4][TF_MAX_NDIM];
  int32_t want_rank;
  DLTensor in[4];
  DLDataType f32 = tf_test_dtype(kDLFloat, 32), dt;
  size_t i, o, slots = 0, idx[4 * TF_MAX_NDIM];
  int accepted = 0, rejected = 0, agree = 1;

  memset(&rs, 0, sizeof rs);
  fetch_rules(k, &rs);
  for (i = 0; i < rs.n_in; ++i) {
    shapes[i] = storage[i];
    in[i] = tf_test_tensor(NULL, f32, rs.in_rank[i], storage[i]);
    slots += (size_t)rs.in_rank[i];
  }
  memset(idx, 0, sizeof idx);
  for (;;) {
    size_t s = 0, a;
    int ok_rules, ok_kernel = 1;
    tf_status st = TF_OK;
    for (i = 0; i < rs.n_in; ++i)
      for (a = 0; a < (size_t)rs.in_rank[i]; ++a) storage[i][a] = (int64_t)idx[s++];
    ok_rules = rules_accept(&rs, shapes, got);
    for (o = 0; o < rs.n_out && ok_kernel; ++o) {
      st = tf_kernel_output_desc(k, in, rs.n_in, o, &dt, &want_rank, want);
      ok_kernel = st == TF_OK;
      if (ok_kernel && ok_rules)
        agree = agree && want_rank == rs.out_rank[o] &&
                memcmp(want, got[o], (size_t)want_rank * sizeof(int64_t)) == 0;
    }
    if (ok_rules != ok_kernel) {
      fprintf(stderr, "%s: the rules say %d, the kernel %s (%s), at extents", fn, ok_rules,
              tf_status_name(st), tf_last_error());
      for (s = 0; s < slots; ++s) fprintf(stderr, " %d", (int)idx[s]);
      fprintf(stderr, "\n");
      agree = 0;
    }
    /* A rejection is a signature mismatch, or a zero divisor / negative extent at run time. */
    if (!ok_kernel) agree = agree && (st == TF_ERR_INVALID_ARGUMENT || st == TF_ERR_RUNTIME);
    accepted += ok_kernel;
    rejected += !ok_kernel;
    for (s = 0; s < slots && ++idx[s] == (size_t)limit; ++s) idx[s] = 0;
    if (s == slots) break;
  }
  CHECK(agree);
  CHECK(accepted > 0 && rejected > 0); /* the grid reaches both sides */
  tf_kernel_release(k);
}

static void test_rules_match_binding(tf_module m) {
  check_against_output_desc(m, "rules", 8);
  check_against_output_desc(m, "late", 8);
  check_against_output_desc(m, "divide", 7); /* Q = 0 divides by zero */
  check_against_output_desc(m, "pad", 8);
}

static void test_errors(tf_module m) {
  tf_kernel k = compile_evaluator(m, "pad"), gone = compile_evaluator(m, "pad");
  int64_t w[MAX_WORDS];
  size_t len = 777;
  DLDataType dt = tf_test_dtype(99, 99);
  int32_t ndim = -7;
  tf_input_axis r;

  tf_kernel_release(gone);
  tf_test_fill_sentinel(w, sizeof w);
  tf_test_fill_sentinel(&r, sizeof r);
  r.struct_size = sizeof r;

  CHECK_STATUS(tf_kernel_output_type(NULL, 0, &dt, &ndim), TF_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(tf_kernel_output_type(gone, 0, &dt, &ndim), TF_ERR_INVALID_HANDLE, "not a live");
  CHECK_STATUS(tf_kernel_output_type(k, 0, NULL, &ndim), TF_ERR_INVALID_ARGUMENT, "dtype is NULL");
  CHECK_STATUS(tf_kernel_output_type(k, 0, &dt, NULL), TF_ERR_INVALID_ARGUMENT, "ndim is NULL");
  CHECK_STATUS(tf_kernel_output_type(k, 3, &dt, &ndim), TF_ERR_INVALID_ARGUMENT,
               "tf_kernel_output_type: output index 3 out of range ('pad' has 3 outputs)");
  CHECK(dt.code == 99 && ndim == -7);

  CHECK_STATUS(tf_kernel_input_axis(NULL, 0, 0, &r), TF_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(tf_kernel_input_axis(gone, 0, 0, &r), TF_ERR_INVALID_HANDLE, "not a live");
  CHECK_STATUS(tf_kernel_input_axis(k, 0, 0, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_kernel_input_axis(k, 1, 0, &r), TF_ERR_INVALID_ARGUMENT, "input index 1");
  CHECK_STATUS(tf_kernel_input_axis(k, 0, 2, &r), TF_ERR_INVALID_ARGUMENT,
               "axis 2 out of range (input #0 has rank 2)");
  r.struct_size = 4;
  CHECK_STATUS(tf_kernel_input_axis(k, 0, 0, &r), TF_ERR_INVALID_ARGUMENT, "struct_size 4");
  CHECK(r.struct_size == 4);
  r.struct_size = sizeof r;
  CHECK(tf_test_untouched((const char*)&r + sizeof r.struct_size, sizeof r - sizeof r.struct_size));

  /* An older (smaller) struct is filled as far as it goes, and no further. */
  r.struct_size = (uint32_t)offsetof(tf_input_axis, hi);
  CHECK_OK(tf_kernel_input_axis(k, 0, 0, &r));
  CHECK(r.struct_size == offsetof(tf_input_axis, hi));
  CHECK(r.rule == TF_AXIS_BINDS_DIMVAR && r.value == 0 && r.lo == 1);
  CHECK(tf_test_untouched(&r.hi, sizeof r - offsetof(tf_input_axis, hi)));

  CHECK_STATUS(tf_kernel_input_extent(NULL, 0, 0, w, MAX_WORDS, &len), TF_ERR_INVALID_ARGUMENT,
               "NULL");
  CHECK_STATUS(tf_kernel_input_extent(gone, 0, 0, w, MAX_WORDS, &len), TF_ERR_INVALID_HANDLE,
               "not a live");
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 0, w, MAX_WORDS, NULL), TF_ERR_INVALID_ARGUMENT,
               "length is NULL");
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 0, NULL, 4, &len), TF_ERR_INVALID_ARGUMENT,
               "program is NULL");
  CHECK_STATUS(tf_kernel_input_extent(k, 1, 0, w, MAX_WORDS, &len), TF_ERR_INVALID_ARGUMENT,
               "tf_kernel_input_extent: input index 1 out of range ('pad' has 1 inputs)");
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 9, w, MAX_WORDS, &len), TF_ERR_INVALID_ARGUMENT,
               "axis 9 out of range");
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 0, w, 2, &len), TF_ERR_INVALID_ARGUMENT,
               "capacity 2 is below the program's 3 words");

  CHECK_STATUS(tf_kernel_output_extent(NULL, 0, 0, w, MAX_WORDS, &len), TF_ERR_INVALID_ARGUMENT,
               "NULL");
  CHECK_STATUS(tf_kernel_output_extent(gone, 0, 0, w, MAX_WORDS, &len), TF_ERR_INVALID_HANDLE,
               "not a live");
  CHECK_STATUS(tf_kernel_output_extent(k, 0, 0, w, MAX_WORDS, NULL), TF_ERR_INVALID_ARGUMENT,
               "length is NULL");
  CHECK_STATUS(tf_kernel_output_extent(k, 0, 0, NULL, 1, &len), TF_ERR_INVALID_ARGUMENT,
               "program is NULL");
  CHECK_STATUS(tf_kernel_output_extent(k, 3, 0, w, MAX_WORDS, &len), TF_ERR_INVALID_ARGUMENT,
               "output index 3 out of range");
  CHECK_STATUS(tf_kernel_output_extent(k, 1, 1, w, MAX_WORDS, &len), TF_ERR_INVALID_ARGUMENT,
               "axis 1 out of range (output #1 has rank 1)");
  CHECK_STATUS(tf_kernel_output_extent(k, 1, 0, w, 8, &len), TF_ERR_INVALID_ARGUMENT,
               "capacity 8 is below the program's 9 words");
  CHECK(len == 777 && tf_test_untouched(w, sizeof w));

  /* Exactly the length is enough; NULL with capacity 0 asks for it. */
  CHECK_OK(tf_kernel_output_extent(k, 1, 0, w, 9, &len));
  CHECK(len == 9 && w[0] == TF_DIM_OP_PUSH_INPUT_EXTENT && w[8] == TF_DIM_OP_ADD);
  len = 0;
  CHECK_OK(tf_kernel_output_extent(k, 0, 1, NULL, 0, &len));
  CHECK(len == 2);
  tf_kernel_release(k);
}

/* A DimVar that no input axis binds: the kernel fails on every input, and
 * its extents have no program. */
static void test_unbound_dimvar(void) {
  static const char* src =
      "from tilefoundry.dsl import *\n"
      "K = DimVar(\"K\", 1, 8)\n"
      "@func\n"
      "def lonely(x: Tensor[(K * 2,), f32]) -> Tensor[(K * 2,), f32]:\n"
      "    return x\n";
  tf_module m = tf_test_parse(src);
  tf_kernel k = compile_evaluator(m, "lonely");
  int64_t w[MAX_WORDS], shape[1] = {4}, out_shape[TF_MAX_NDIM];
  size_t len = 777;
  tf_input_axis r;
  DLTensor in = tf_test_tensor(NULL, tf_test_dtype(kDLFloat, 32), 1, shape);
  DLDataType dt;
  int32_t ndim;

  tf_test_fill_sentinel(w, sizeof w);
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  CHECK_STATUS(tf_kernel_output_desc(k, &in, 1, 0, &dt, &ndim, out_shape), TF_ERR_RUNTIME, "K");
  CHECK_OK(tf_kernel_input_axis(k, 0, 0, &r)); /* the rule needs no program */
  CHECK(r.rule == TF_AXIS_EXPR);
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 0, w, MAX_WORDS, &len), TF_ERR_UNSUPPORTED,
               "'lonely' input #0 (x) axis 0 (K * 2) uses DimVar K, which no input axis binds");
  CHECK_STATUS(tf_kernel_output_extent(k, 0, 0, w, MAX_WORDS, &len), TF_ERR_UNSUPPORTED,
               "tf_kernel_output_extent: 'lonely' output #0 axis 0");
  CHECK(len == 777 && tf_test_untouched(w, sizeof w));
  tf_kernel_release(k);
  tf_module_release(m);
}

int main(void) {
  tf_module m = tf_test_parse(kSrc);
  test_static(m);
  test_dimvar(m);
  test_expressions_and_several_outputs(m);
  test_rules_match_binding(m);
  test_errors(m);
  test_unbound_dimvar();
  tf_module_release(m);
  TF_TEST_SUMMARY();
}
