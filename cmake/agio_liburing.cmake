# Defines the imported target agio::uring for liburing: through pkg-config where it is
# installed, else by searching CMAKE_PREFIX_PATH (e.g. Debian packages unpacked with dpkg -x on
# a machine without network access).
if(NOT TARGET agio::uring)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(AGIO_URING QUIET IMPORTED_TARGET liburing)
  endif()
  if(TARGET PkgConfig::AGIO_URING)
    add_library(agio::uring INTERFACE IMPORTED)
    set_target_properties(agio::uring PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::AGIO_URING)
  else()
    find_path(AGIO_URING_INCLUDE_DIR liburing.h)
    find_library(AGIO_URING_LIBRARY uring)
    if(NOT AGIO_URING_INCLUDE_DIR OR NOT AGIO_URING_LIBRARY)
      message(FATAL_ERROR "agio needs liburing (Debian/Ubuntu: apt-get install liburing-dev)")
    endif()
    add_library(agio::uring UNKNOWN IMPORTED)
    set_target_properties(agio::uring PROPERTIES IMPORTED_LOCATION "${AGIO_URING_LIBRARY}"
                                                 INTERFACE_INCLUDE_DIRECTORIES "${AGIO_URING_INCLUDE_DIR}")
  endif()
endif()
