// Built by tests/packaging (config-deps): the compile definitions of the stand-in utf8proc, xxHash and hwloc packages
// reach this program only through cputrain::cputrain and cputrain::hwloc, and the calls below link their libraries.
#include <cputrain/io/tensor_checksum.hpp>
#include <cputrain/machine/topology.hpp>
#include <cputrain/text/char_classes.hpp>

#include <cstdio>

int main() {
#if defined(CPUTRAIN_STUB_UTF8PROC_PACKAGE) && defined(CPUTRAIN_STUB_XXHASH_PACKAGE) && \
    defined(CPUTRAIN_STUB_HWLOC_PACKAGE) && defined(CPUTRAIN_HAVE_HWLOC)
  const bool packages = true;
#else
  const bool packages = false;
#endif
  // U+00E9 is a lower-case letter; U+0301 (combining acute accent) a non-spacing mark, which BERT drops.
  const bool utf8proc_ok = utf8proc_category(0xE9) == UTF8PROC_CATEGORY_LL &&
                           cputrain::text::is_bert_nonspacing_mark(0x301);
  // XXH3-64 of no bytes, as xxHash documents it.
  const bool xxhash_ok = cputrain::io::tensor_checksum({}) == 0x2d06800538d394c2ULL;
  const auto nodes = cputrain::topology::detect().nodes().size();
  std::printf(
      "config-deps consumer: utf8proc, xxHash and hwloc packages %s, utf8proc %s, xxHash %s, %zu NUMA node(s)\n",
      packages ? "used" : "NOT used", utf8proc_ok ? "works" : "FAILS", xxhash_ok ? "works" : "FAILS", nodes);
  return packages && utf8proc_ok && xxhash_ok && nodes > 0 ? 0 : 1;
}
