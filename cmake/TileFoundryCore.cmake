# The core libraries, one static library per layer so that the dependency
# rule (ir <- ops <- sema <- frontend/eval/compiler) is enforced by the linker:
# a layer can only use what it links.
find_package(Threads REQUIRED)
find_path(DLPACK_INCLUDE_DIR dlpack/dlpack.h REQUIRED)

function(tf_core_layer name dir)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/core/${dir}/*.cc)
  if(NOT srcs)  # a layer still being written: configure the rest anyway
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${ARGN})
    return()
  endif()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include
                                               ${DLPACK_INCLUDE_DIR})
  target_compile_options(${name} PRIVATE ${TF_WARNINGS})
  # Core code is hidden inside libtilefoundry.so; only tf_* leaves it.
  set_target_properties(${name} PROPERTIES CXX_VISIBILITY_PRESET hidden
                                           VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${name} PUBLIC ${ARGN})
endfunction()

find_package(BLAS REQUIRED)
# oneDNN (libdnnl-dev) computes the f32 products the small-GEMM loop does not
# (core/runtime/gemm.h); its C API is enough, so no dnnl-config.cmake (which
# would also want OpenCL's development files).
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.h REQUIRED)
find_library(DNNL_LIBRARY NAMES dnnl REQUIRED)
# The GEMM sets the team size of the OpenMP runtime oneDNN uses: Debian's
# oneDNN is built on GNU OpenMP, so libgomp by its soname (with clang too).
find_library(TF_GOMP_LIBRARY NAMES libgomp.so.1 gomp REQUIRED)

tf_core_layer(tf_ir ir Threads::Threads)
tf_core_layer(tf_ops ops tf_ir)
tf_core_layer(tf_sema sema tf_ops)
# TIR, the loop IR the compiler lowers HIR into; it knows dtypes, nothing else of HIR.
tf_core_layer(tf_tir tir tf_ir)
tf_core_layer(tf_frontend frontend tf_sema)
tf_core_layer(tf_runtime runtime tf_ir ${BLAS_LIBRARIES} ${DNNL_LIBRARY} ${TF_GOMP_LIBRARY})
target_include_directories(tf_runtime PRIVATE ${DNNL_INCLUDE_DIR})
# The small-GEMM loop (runtime/gemm.h) is the one hot loop of core: -O3 and
# `omp simd` (no OpenMP runtime) let it vectorize into registers; its
# target_clones pick AVX-512 / AVX2 at load time.
set_source_files_properties(${PROJECT_SOURCE_DIR}/core/runtime/gemm.cc PROPERTIES COMPILE_OPTIONS "-O3;-fopenmp-simd")
tf_core_layer(tf_eval eval tf_sema tf_runtime ${BLAS_LIBRARIES})
# The native backend: generates C++, runs the system compiler, dlopens.
tf_core_layer(tf_compiler compiler tf_sema tf_tir tf_runtime ${BLAS_LIBRARIES} ${CMAKE_DL_LIBS})
# Every generated kernel starts with the text of core/runtime/scalar_numerics.h,
# the scalar numerics the evaluator compiles too: one copy, embedded at build
# time (core/compiler/prelude.cc), so an edit of the header rebuilds the prelude.
set(TF_SCALAR_NUMERICS_SOURCE ${CMAKE_BINARY_DIR}/generated/scalar_numerics_source.cc)
add_custom_command(
  OUTPUT ${TF_SCALAR_NUMERICS_SOURCE}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${PROJECT_SOURCE_DIR}/core/runtime/scalar_numerics.h
          -DOUTPUT=${TF_SCALAR_NUMERICS_SOURCE} -DNAMESPACE=tf::compiler -DFUNCTION=scalar_numerics_source
          -DINCLUDE=core/compiler/prelude.h -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/core/runtime/scalar_numerics.h ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
  COMMENT "Embedding core/runtime/scalar_numerics.h in the kernel prelude"
  VERBATIM)
target_sources(tf_compiler PRIVATE ${TF_SCALAR_NUMERICS_SOURCE})
# The SPMD executor of device-sharded functions (its compute segments
# compiled natively) and the virtual mesh over it.
tf_core_layer(tf_spmd spmd tf_eval tf_compiler tf_sema Threads::Threads)

# The kernel prelude precompiled for the default toolchain, beside the
# library (core/compiler/toolchain.h): a cold kernel compile includes it
# instead of parsing the prelude and <immintrin.h> again. Rebuilt whenever
# the compiler layer (and so the prelude) changes.
add_executable(tf_prelude_pch ${PROJECT_SOURCE_DIR}/tools/prelude_pch.cc)
target_link_libraries(tf_prelude_pch PRIVATE tf_compiler)
target_compile_options(tf_prelude_pch PRIVATE ${TF_WARNINGS})
set(TF_PRELUDE_PCH_DIR ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/tilefoundry-pch)
add_custom_command(
  OUTPUT ${TF_PRELUDE_PCH_DIR}/stamp
  COMMAND tf_prelude_pch ${TF_PRELUDE_PCH_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${TF_PRELUDE_PCH_DIR}/stamp
  DEPENDS tf_prelude_pch
  COMMENT "Precompiling the kernel prelude"
  VERBATIM)
add_custom_target(tf_prelude_pch_files ALL DEPENDS ${TF_PRELUDE_PCH_DIR}/stamp)
