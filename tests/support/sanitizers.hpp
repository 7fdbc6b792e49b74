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
