# The order CTest starts the tests in (docs/build.md, "How CI spends its time"). CTest runs the costliest test first
# when it runs several at once, but a cold build has no measured costs, so it would start them in the order they
# were added: the examples last. The examples share the machine's cores (RESOURCE_LOCK cputrain_cores) and so run
# one after another; started last, that chain ran alone at the end with the other slot idle. Here every lock
# holder outranks every other test, so the chain starts at once and the rest of the suite fills the other slot,
# longest first.

# Seconds each long test took in ci-gcc on a 2-core Zen 5; only the order matters, so rough figures do.
set(_cputrain_expected_seconds
  packaging/install 112  packaging/subdirectory 57  packaging/test-package 44  packaging/config-deps 21
  deploy/docker/image-steps 36  docs/user-commands 15
  examples/run_qa/fault/kill-during-save 68  examples/run_qa/fault/long-run 20  examples/demo 28
  examples/run_qa/memory/estimate 19  examples/run_qa/mpich/equivalence 17  examples/run_qa/mpi/equivalence 15)

# Called where a CMakeLists.txt (or a function adding tests) adds tests that hold cputrain_cores or run long: it
# sets the costs of that directory's tests once the directory is done (set_tests_properties reaches only the calling
# directory's tests). Calling it again in the same directory does nothing more.
function(cputrain_schedule_tests)
  get_property(_scheduled DIRECTORY PROPERTY CPUTRAIN_TESTS_SCHEDULED)
  if(NOT _scheduled)
    set_property(DIRECTORY PROPERTY CPUTRAIN_TESTS_SCHEDULED ON)
    cmake_language(DEFER CALL _cputrain_set_test_costs)
  endif()
endfunction()

function(_cputrain_set_test_costs)
  get_property(_tests DIRECTORY PROPERTY TESTS)
  foreach(_test IN LISTS _tests)
    set(_cost 0)
    list(FIND _cputrain_expected_seconds "${_test}" _at)
    if(_at GREATER_EQUAL 0)
      math(EXPR _at "${_at} + 1")
      list(GET _cputrain_expected_seconds ${_at} _cost)
    endif()
    get_test_property("${_test}" RESOURCE_LOCK _locks)
    if(_locks AND "cputrain_cores" IN_LIST _locks)
      math(EXPR _cost "${_cost} + 1000")
    endif()
    if(_cost GREATER 0)
      set_tests_properties("${_test}" PROPERTIES COST ${_cost})
    endif()
  endforeach()
endfunction()
