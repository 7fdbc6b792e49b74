// A downstream program: everything it knows of cputrain comes from the package (find_package or
// add_subdirectory), exactly as a user's project would see it.
#include <cputrain/cputrain.hpp>

#include <cstdio>
#include <vector>

int main() {
  using policy = cputrain::policy<cputrain::precision::bf16_mixed, cputrain::parallel::single,
                                  cputrain::alloc::tbb_scalable>;
  policy::buffer<float> weights(1000);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = 1.0f + static_cast<float>(i) / 1024.0f;
  policy::buffer<cputrain::bf16> stored(weights.size());
  cputrain::to_bf16(weights, stored);
  std::vector<float> back(weights.size());
  cputrain::to_float(stored, back);
  // 1 + 999/1024 rounds to 1.9765625 in bf16 (8 significant bits)
  std::printf("cputrain %s consumer: %s/%s, last weight %.7g, %zu NUMA node(s)\n", cputrain::version_string,
              policy::precision_policy::name.data(), policy::parallel_policy::name.data(),
              static_cast<double>(back.back()), cputrain::topology::detect().nodes().size());
  return back.back() == 1.9765625f ? 0 : 1;
}
