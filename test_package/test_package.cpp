// A downstream program for the package recipes: what it knows of cputrain comes from the package alone. It tokenizes
// with the WordPiece tokenizer (utf8proc), multiplies two matrices with the GEMM kernel (oneTBB, and oneDNN when the
// package has it, Eigen otherwise) and reads the machine's NUMA topology (hwloc when the package has it, /sys
// otherwise).
#include <cputrain/machine/topology.hpp>
#include <cputrain/kernels/gemm.hpp>
#include <cputrain/kernels/gemm_backend.hpp>
#include <cputrain/text/bert_tokenizer.hpp>
#include <cputrain/version.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#ifndef EIGEN_DONT_PARALLELIZE
#error "the cputrain package must define EIGEN_DONT_PARALLELIZE (all threading goes through oneTBB)"
#endif

int main() {
  namespace text = cputrain::text;
  const text::bert_tokenizer tokenizer(text::vocabulary(
      {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "cafe", "!"}, "test vocabulary"));
  // Lower-cased, accents stripped (E WITH ACUTE -> e), split at punctuation, WordPiece on "unaffable".
  const auto tokens = tokenizer.encode("Unaffable CAF\xC3\x89!");
  const std::vector<std::int32_t> expected_ids{5, 6, 7, 8, 9};

  const std::array<float, 6> a{1, 2, 3, 4, 5, 6};     // 2 x 3
  const std::array<float, 6> b{7, 8, 9, 10, 11, 12};  // 3 x 2
  std::array<float, 4> c{};
  cputrain::kernels::gemm(cputrain::kernels::transpose::no, cputrain::kernels::transpose::no, 2, 2, 3, 1.0f, a.data(),
                          3, b.data(), 2, 0.0f, c.data(), 2, cputrain::kernels::gemm_threads::calling_thread);
  const std::array<float, 4> expected_c{58, 64, 139, 154};

  std::string ids;
  for (const auto id : tokens.ids) ids += " " + std::to_string(id);
#ifdef CPUTRAIN_HAVE_HWLOC
  const char* hwloc = "hwloc";
#else
  const char* hwloc = "sysfs";
#endif
  std::printf("cputrain %s test_package: tokens%s, gemm %g %g %g %g, topology from %s: %zu NUMA node(s), "
              "fp32 products on %s\n",
              cputrain::version_string, ids.c_str(), static_cast<double>(c[0]), static_cast<double>(c[1]),
              static_cast<double>(c[2]), static_cast<double>(c[3]), hwloc,
              cputrain::topology::detect().nodes().size(), cputrain::kernels::gemm_path_description(false).c_str());
  return tokens.ids == expected_ids && c == expected_c ? 0 : 1;
}
