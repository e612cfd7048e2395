# make install (and the wheel, whose install prefix is the Python package's
# directory): headers, the two libraries, and a CMake package config so that
# a C or C++ project can find_package(TileFoundry).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tilefoundry DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tilefoundry EXPORT TileFoundryTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tilefoundry_torch)
  install(TARGETS tilefoundry_torch LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libtilefoundry_torch.torch-version
          DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# The precompiled kernel prelude (optional: kernels compile its text
# without it), found beside libtilefoundry.so.
install(DIRECTORY ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/tilefoundry-pch DESTINATION ${CMAKE_INSTALL_LIBDIR}
        FILES_MATCHING PATTERN "pch-*")
install(EXPORT TileFoundryTargets NAMESPACE TileFoundry::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/TileFoundry)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TileFoundryConfig.cmake.in
  ${CMAKE_BINARY_DIR}/TileFoundryConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/TileFoundry)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/TileFoundryConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/TileFoundryConfig.cmake
              ${CMAKE_BINARY_DIR}/TileFoundryConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/TileFoundry)

# The wheel is self-contained for C consumers: tilefoundry.h includes
# <dlpack/dlpack.h>, so the header it was built with goes beside it. (A
# system install leaves dlpack to the system's package.)
if(SKBUILD)
  install(FILES ${DLPACK_INCLUDE_DIR}/dlpack/dlpack.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dlpack)
endif()
