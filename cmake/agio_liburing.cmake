# Defines the imported target agio::uring for liburing. Searched for directly first, which
# honours CMAKE_PREFIX_PATH (e.g. Debian packages unpacked with dpkg -x on a machine without
# network access, whose .pc files would still point at /usr); pkg-config is the fallback.
if(NOT TARGET agio::uring)
  find_path(AGIO_URING_INCLUDE_DIR liburing.h)
  find_library(AGIO_URING_LIBRARY uring)
  if(AGIO_URING_INCLUDE_DIR AND AGIO_URING_LIBRARY)
    add_library(agio::uring UNKNOWN IMPORTED)
    set_target_properties(agio::uring PROPERTIES IMPORTED_LOCATION "${AGIO_URING_LIBRARY}"
                                                 INTERFACE_INCLUDE_DIRECTORIES "${AGIO_URING_INCLUDE_DIR}")
  else()
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(AGIO_URING QUIET IMPORTED_TARGET liburing)
    endif()
    if(NOT TARGET PkgConfig::AGIO_URING)
      message(FATAL_ERROR "agio needs liburing (Debian/Ubuntu: apt-get install liburing-dev)")
    endif()
    add_library(agio::uring INTERFACE IMPORTED)
    set_target_properties(agio::uring PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::AGIO_URING)
  endif()
endif()
