// Whether this test program is built with AddressSanitizer, under GCC (__SANITIZE_ADDRESS__) or Clang
// (__has_feature(address_sanitizer)): CPUTRAIN_TEST_ASAN is 1 then, else 0. Tests that replace operator new or ask
// for more memory than exists behave differently there (ASan's allocator reports and aborts instead of throwing).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define CPUTRAIN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPUTRAIN_TEST_ASAN 1
#endif
#endif
#ifndef CPUTRAIN_TEST_ASAN
#define CPUTRAIN_TEST_ASAN 0
#endif

// A test's own oracle loop (a reference product, a sweep over every input) that reads only the test's data on one
// thread: the sanitizers have nothing to find there, and instrumented it took most of the ASan and TSan programs'
// time. Such a function must call nothing that is instrumented in its loop (an instrumented callee is not inlined
// into it), so it works on plain pointers.
#define CPUTRAIN_TEST_NOT_SANITIZED __attribute__((no_sanitize("address", "thread", "undefined")))
