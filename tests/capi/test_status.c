/* Status codes, version, last error, and the compile-time statuses:
 * parse error, type error, not found, bad compile options. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <ctype.h>

#include "tf_test.h"

/* 1 when s contains "<file>:<digits>:<digits>". */
static int has_location(const char* s, const char* file) {
  const char* p = strstr(s, file);
  int fields = 0;
  if (p == NULL) return 0;
  p += strlen(file);
  while (fields < 2) {
    if (*p != ':' || !isdigit((unsigned char)p[1])) return 0;
    ++p;
    while (isdigit((unsigned char)*p)) ++p;
    ++fields;
  }
  return 1;
}

static void test_version_and_names(void) {
  CHECK(tf_abi_version() == (uint32_t)TF_ABI_VERSION);
  CHECK(tf_abi_version() == (((uint32_t)TF_VERSION_MAJOR << 16) | TF_VERSION_MINOR));
  CHECK(strcmp(tf_status_name(TF_OK), "TF_OK") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_PARSE), "TF_ERR_PARSE") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_TYPE), "TF_ERR_TYPE") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_VERIFY), "TF_ERR_VERIFY") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_NOT_FOUND), "TF_ERR_NOT_FOUND") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_INVALID_ARGUMENT), "TF_ERR_INVALID_ARGUMENT") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_UNSUPPORTED), "TF_ERR_UNSUPPORTED") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_RUNTIME), "TF_ERR_RUNTIME") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_OUT_OF_MEMORY), "TF_ERR_OUT_OF_MEMORY") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_INTERNAL), "TF_ERR_INTERNAL") == 0);
  CHECK(strcmp(tf_status_name(TF_ERR_INVALID_HANDLE), "TF_ERR_INVALID_HANDLE") == 0);
  CHECK(tf_status_name((tf_status)1234) != NULL);
}

#define TF_TEST_MAX_NAMES 512

/* 1 when name is among names[0..n). */
static int lists(const char* const* names, size_t n, const char* name) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (strcmp(names[i], name) == 0) return 1;
  return 0;
}

static void test_surface_function_names(void) {
  const char* names[TF_TEST_MAX_NAMES];
  size_t n = 0, i, j, repeats = 0;
  const char* kept = (const char*)&kept; /* a value the failure must leave alone */
  CHECK_OK(tf_surface_function_count(&n));
  CHECK(n > 50 && n <= TF_TEST_MAX_NAMES);
  if (n > TF_TEST_MAX_NAMES) n = TF_TEST_MAX_NAMES;
  for (i = 0; i < n; ++i) CHECK_OK(tf_surface_function_name(i, &names[i]));
  /* An op surface function, a reduce alias, an nn function, the parser's own calls. */
  CHECK(lists(names, n, "add") && lists(names, n, "abs_max") && lists(names, n, "rms_norm"));
  CHECK(lists(names, n, "reshard") && lists(names, n, "local"));
  CHECK(lists(names, n, "tile") && lists(names, n, "load_tile"));
  CHECK(!lists(names, n, "DimVar")); /* a compile-time builtin, not a tensor call */
  for (i = 0; i < n; ++i)
    for (j = i + 1; j < n; ++j) repeats += strcmp(names[i], names[j]) == 0;
  CHECK(repeats == 0);
  CHECK_STATUS(tf_surface_function_name(n, &kept), TF_ERR_INVALID_ARGUMENT, "out of range");
  CHECK(kept == (const char*)&kept);
}

static void test_parse_error(void) {
  const char* src =
      "from tilefoundry.dsl import *\n\n@func\ndef f(x: Tensor[(4,), f32]) -> :\n    return x\n";
  tf_module m = (tf_module)&m; /* a value the failure must leave alone */
  tf_module before = m;
  CHECK_STATUS(tf_module_parse(src, strlen(src), "bad.tf", &m), TF_ERR_PARSE, "bad.tf:4:");
  CHECK(has_location(tf_last_error(), "bad.tf"));
  CHECK(strstr(tf_last_error(), "def f(x") != NULL); /* the source line is quoted */
  CHECK(m == before);
  /* len is honoured: the valid prefix of a longer buffer parses. */
  {
    const char* two = TF_TEST_MODULE_SRC "@@@ not python";
    tf_module ok = NULL;
    CHECK_OK(tf_module_parse(two, strlen(TF_TEST_MODULE_SRC), NULL, &ok));
    tf_module_release(ok);
    CHECK_STATUS(tf_module_parse(two, strlen(two), NULL, &ok), TF_ERR_PARSE, ":");
  }
}

static void test_type_error(void) {
  const char* src =
      "from tilefoundry.dsl import *\n\n@func\n"
      "def f(a: Tensor[(4,), f32], b: Tensor[(4,), f16]) -> Tensor[(4,), f32]:\n"
      "    return a + b\n";
  tf_module m = NULL;
  CHECK_STATUS(tf_module_parse(src, strlen(src), "mix.tf", &m), TF_ERR_TYPE, "f16");
  CHECK(has_location(tf_last_error(), "mix.tf"));
  CHECK(m == NULL);
}

static void test_module_queries(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  size_t n = 0;
  const char* name = NULL;
  char* text = NULL;
  CHECK_OK(tf_module_num_functions(m, &n));
  CHECK(n == 2);
  CHECK_OK(tf_module_function_name(m, 0, &name));
  CHECK(name != NULL && strcmp(name, "rmsnorm") == 0);
  CHECK_OK(tf_module_function_name(m, 1, &name));
  CHECK(name != NULL && strcmp(name, "addmul") == 0);
  name = "unchanged";
  CHECK_STATUS(tf_module_function_name(m, 2, &name), TF_ERR_INVALID_ARGUMENT, "out of range");
  CHECK(strcmp(name, "unchanged") == 0);

  CHECK_OK(tf_module_signature(m, "rmsnorm", &text));
  CHECK(text != NULL && strstr(text, "rmsnorm") != NULL && strstr(text, "f32") != NULL);
  tf_string_free(text);

  text = NULL;
  CHECK_OK(tf_module_print(m, &text));
  CHECK(text != NULL && strstr(text, "def rmsnorm") != NULL && strstr(text, "def addmul") != NULL);
  /* The canonical text parses back and prints identically. */
  if (text != NULL) {
    tf_module again = NULL;
    char* text2 = NULL;
    CHECK_OK(tf_module_parse(text, strlen(text), "printed.tf", &again));
    CHECK_OK(tf_module_print(again, &text2));
    CHECK(text2 != NULL && strcmp(text, text2) == 0);
    tf_string_free(text2);
    tf_module_release(again);
  }
  tf_string_free(text);
  tf_string_free(NULL); /* a no-op */
  tf_module_release(m);
}

static void test_not_found(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel k = (tf_kernel)&m;
  tf_kernel before = k;
  char* text = (char*)&m;
  CHECK_STATUS(tf_kernel_compile(m, "nope", NULL, &k), TF_ERR_NOT_FOUND, "nope");
  CHECK(k == before);
  CHECK_STATUS(tf_module_signature(m, "nope", &text), TF_ERR_NOT_FOUND, "nope");
  CHECK(text == (char*)&m);
  /* A near miss names the module's function the caller likely meant. */
  CHECK_STATUS(tf_kernel_compile(m, "rmsnrom", NULL, &k), TF_ERR_NOT_FOUND, "did you mean 'rmsnorm'?");
  CHECK(k == before);
  CHECK_STATUS(tf_module_signature(m, "admul", &text), TF_ERR_NOT_FOUND, "did you mean 'addmul'?");
  CHECK(text == (char*)&m);
  tf_module_release(m);
}

static void test_compile_options(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_compile_options o;
  tf_kernel k = NULL;
  int32_t backend = -1;

  /* Defaults: native requested and, with a C++ compiler (c++ on every
   * machine this suite runs on), native reported. */
  CHECK_OK(tf_kernel_compile(m, "rmsnorm", NULL, &k));
  CHECK_OK(tf_kernel_backend(k, &backend));
  CHECK(backend == TF_BACKEND_NATIVE);
  tf_kernel_release(k);

  /* No compiler: native requested, the evaluator runs and says so. The
   * compiler is part of the cache key, so this never hits the cache. */
  setenv("TF_CC", "/nonexistent/tf-no-such-cc", 1);
  k = NULL;
  backend = -1;
  CHECK_OK(tf_kernel_compile(m, "rmsnorm", NULL, &k));
  CHECK_OK(tf_kernel_backend(k, &backend));
  CHECK(backend == TF_BACKEND_EVALUATOR);
  tf_kernel_release(k);
  unsetenv("TF_CC");

  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.backend = TF_BACKEND_EVALUATOR;
  k = NULL;
  CHECK_OK(tf_kernel_compile(m, "rmsnorm", &o, &k));
  CHECK_OK(tf_kernel_backend(k, &backend));
  CHECK(backend == TF_BACKEND_EVALUATOR);
  tf_kernel_release(k);

  /* The smallest layout a caller may pass: struct_size + backend. */
  o.struct_size = 8;
  o.flags = 77; /* beyond struct_size: never read */
  k = NULL;
  CHECK_OK(tf_kernel_compile(m, "rmsnorm", &o, &k));
  tf_kernel_release(k);
  o.flags = 0;

  k = NULL;
  o.struct_size = 4;
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", &o, &k), TF_ERR_INVALID_ARGUMENT, "struct_size");
  o.struct_size = sizeof o + 4;
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", &o, &k), TF_ERR_INVALID_ARGUMENT, "struct_size");
  o.struct_size = 0;
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", &o, &k), TF_ERR_INVALID_ARGUMENT, "struct_size");
  o.struct_size = sizeof o;
  o.backend = 7;
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", &o, &k), TF_ERR_INVALID_ARGUMENT, "backend");
  o.backend = -1;
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", &o, &k), TF_ERR_INVALID_ARGUMENT, "backend");
  o.backend = TF_BACKEND_NATIVE;
  o.flags = 1;
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", &o, &k), TF_ERR_INVALID_ARGUMENT, "flags");
  o.flags = 0;
  o.reserved[4] = 1;
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", &o, &k), TF_ERR_INVALID_ARGUMENT, "reserved[4]");
  CHECK(k == NULL);
  tf_module_release(m);
}

static void test_kernel_queries(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel k = tf_test_compile(m, "addmul");
  size_t n = 0;
  const char* s = NULL;
  DLDataType dt;
  int32_t ndim = -1;
  CHECK_OK(tf_kernel_name(k, &s));
  CHECK(s != NULL && strcmp(s, "addmul") == 0);
  CHECK_OK(tf_kernel_num_inputs(k, &n));
  CHECK(n == 2);
  CHECK_OK(tf_kernel_num_outputs(k, &n));
  CHECK(n == 2);
  CHECK_OK(tf_kernel_input_name(k, 1, &s));
  CHECK(s != NULL && strcmp(s, "b") == 0);
  CHECK_OK(tf_kernel_input_desc(k, 0, &dt, &ndim));
  CHECK(dt.code == kDLFloat && dt.bits == 32 && dt.lanes == 1 && ndim == 2);
  s = "unchanged";
  ndim = -1;
  CHECK_STATUS(tf_kernel_input_name(k, 2, &s), TF_ERR_INVALID_ARGUMENT, "out of range");
  CHECK_STATUS(tf_kernel_input_desc(k, 2, &dt, &ndim), TF_ERR_INVALID_ARGUMENT, "out of range");
  CHECK(strcmp(s, "unchanged") == 0 && ndim == -1);
  /* The kernel keeps its module alive. */
  tf_module_release(m);
  CHECK_OK(tf_kernel_name(k, &s));
  CHECK(s != NULL && strcmp(s, "addmul") == 0);
  tf_kernel_release(k);
}

static void test_last_error_is_per_thread_state(void) {
  tf_module m = NULL;
  CHECK_STATUS(tf_module_parse(NULL, 0, NULL, &m), TF_ERR_INVALID_ARGUMENT, "src");
  CHECK(strlen(tf_last_error()) > 0);
  CHECK(tf_last_error() != NULL);
}

int main(void) {
  CHECK(tf_last_error() != NULL && tf_last_error()[0] == '\0');
  test_version_and_names();
  test_surface_function_names();
  test_parse_error();
  test_type_error();
  test_module_queries();
  test_not_found();
  test_compile_options();
  test_kernel_queries();
  test_last_error_is_per_thread_state();
  TF_TEST_SUMMARY();
}
