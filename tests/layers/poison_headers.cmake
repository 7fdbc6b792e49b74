# cputrain_make_poison_headers(<dir>): writes into <dir> a header for every MPI, Boost and hwloc header that the
# library's own headers name (found by reading include/ now, so a new one is covered as soon as it is written),
# each of which stops the build with a message naming it. Put <dir> first on a target's include path and that
# target proves that none of what it compiles reaches MPI, Boost or hwloc.
function(cputrain_make_poison_headers dir)
  file(GLOB_RECURSE _headers "${PROJECT_SOURCE_DIR}/include/cputrain/*.hpp")
  set(_names mpi.h hwloc.h)
  foreach(_header IN LISTS _headers)
    file(STRINGS "${_header}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*<(boost/|mpi|hwloc)")
    foreach(_line IN LISTS _lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<([^>]+)>.*" "\\1" _name "${_line}")
      list(APPEND _names "${_name}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _names)
  foreach(_name IN LISTS _names)
    file(CONFIGURE OUTPUT "${dir}/${_name}" CONTENT
         "#error \"<${_name}> reached from cputrain's core: only cputrain::mpi, cputrain::cli and cputrain::hwloc may use MPI, Boost or hwloc (docs/overview.md)\"\n")
  endforeach()
endfunction()
