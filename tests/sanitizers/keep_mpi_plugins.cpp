// Preloaded (LD_PRELOAD) into the processes of the sanitizer builds' tests that start MPI: dlclose does nothing,
// so Open MPI's plug-ins (mca_*.so) stay mapped after MPI_Finalize. LeakSanitizer, which reports at exit, can then
// name the plug-in that allocated what Open MPI keeps, and the suppressions (lsan.supp) match it on the allocation's
// first frame, which the fast unwinder gives. Without it those frames read "<unknown module>", and only the slow
// unwinder (fast_unwind_on_malloc=0), which reaches libopen-pal.so deeper in each stack, could attribute them: that
// unwinder took 40% of run_qa's time under ASan (docs/sanitizers.md). Nothing here runs in a test of cputrain's
// own code paths: cputrain itself never calls dlclose.
extern "C" int dlclose(void* /*handle*/) { return 0; }
