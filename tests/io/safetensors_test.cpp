// Tests for include/cputrain/io/safetensors.hpp: the dtype table, exact F16/BF16 conversions, round trips of
// every dtype, the writer's exact bytes, a file from an independent writer (scripts/make_safetensors_reference.py),
// check_tensors' one-shot report, and a corpus of broken files — one per rule the reader enforces — each of which
// must throw io_error naming the file and what is wrong, plus truncations and byte flips of a valid file, which
// must never crash or read out of bounds (run this under the asan preset).
#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <stdlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <xxhash.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/io/safetensors.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace safetensors_test {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::bf16;
using cputrain::usage_error;
using cputrain::io::check_tensors;
using cputrain::io::dtype;
using cputrain::io::expected_tensor;
using cputrain::io::io_error;
using cputrain::io::safetensors_file;
using cputrain::io::safetensors_writer;

namespace {

using cputrain::test::temp_dir;


std::string le64(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

/// A file from its header text and data region, the header length taken from the text.
std::string file_bytes(const std::string& header, const std::string& data = {}) {
  return le64(header.size()) + header + data;
}

fs::path put(const temp_dir& dir, const std::string& bytes, const std::string& name = "model.safetensors") {
  const fs::path p = dir.path() / name;
  // A new file rather than a truncated one: ext4 flushes a truncated-and-rewritten file to disk on close
  // (auto_da_alloc), which makes thousands of rewrites take seconds.
  fs::remove(p);
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The message open() throws for `bytes`, or a note that it did not throw.
std::string open_error(const temp_dir& dir, const std::string& bytes) {
  const fs::path p = put(dir, bytes, "broken.safetensors");
  try {
    (void)safetensors_file::open(p);
  } catch (const io_error& e) {
    return e.what();
  }
  return "<open() did not throw>";
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) {
    char b[4];
    std::memcpy(b, &v, 4);
    s.append(b, 4);
  }
  return s;
}

/// binary16 -> float from the definition: (-1)^s * 2^(e-15) * 1.m, or 2^-14 * 0.m for subnormals.
float f16_reference(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else {
    magnitude = std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

}  // namespace

TEST_CASE("dtype names, sizes and parsing") {
  CHECK(cputrain::io::dtype_size(dtype::f32) == 4);
  CHECK(cputrain::io::dtype_size(dtype::bf16) == 2);
  CHECK(cputrain::io::dtype_size(dtype::f16) == 2);
  CHECK(cputrain::io::dtype_size(dtype::i64) == 8);
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f16, dtype::i64}) {
    CHECK(cputrain::io::dtype_from_string(cputrain::io::to_string(t)) == t);
    CHECK(cputrain::io::is_safetensors_dtype_name(cputrain::io::to_string(t)));
  }
  CHECK(cputrain::io::to_string(dtype::bf16) == "BF16");
  CHECK_FALSE(cputrain::io::dtype_from_string("F64"));
  CHECK_FALSE(cputrain::io::dtype_from_string("f32"));  // the format's names are upper case
  CHECK(cputrain::io::is_safetensors_dtype_name("F64"));
  CHECK(cputrain::io::is_safetensors_dtype_name("BOOL"));
  CHECK_FALSE(cputrain::io::is_safetensors_dtype_name("FLOAT"));
}

TEST_CASE("F16 to float is exact on known values and on all 65536 bit patterns") {
  using cputrain::io::detail::f16_bits_to_float;
  CHECK(f16_bits_to_float(0x3c00) == 1.0f);
  CHECK(f16_bits_to_float(0xc100) == -2.5f);
  CHECK(f16_bits_to_float(0x7bff) == 65504.0f);            // largest finite
  CHECK(f16_bits_to_float(0x0400) == 0x1p-14f);            // smallest normal
  CHECK(f16_bits_to_float(0x0001) == 0x1p-24f);            // smallest subnormal
  CHECK(f16_bits_to_float(0x03ff) == 1023.0f * 0x1p-24f);  // largest subnormal
  CHECK(f16_bits_to_float(0x8001) == -0x1p-24f);
  CHECK(f16_bits_to_float(0x7c00) == std::numeric_limits<float>::infinity());
  CHECK(f16_bits_to_float(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(f16_bits_to_float(0x7e00)));
  CHECK(std::isnan(f16_bits_to_float(0x7c01)));  // signalling NaN stays a NaN, not Inf
  CHECK(std::signbit(f16_bits_to_float(0xfe00)));
  CHECK(std::bit_cast<std::uint32_t>(f16_bits_to_float(0x8000)) == 0x80000000u);  // -0 keeps its sign

  int mismatches_definition = 0, mismatches_eigen = 0;
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float got = f16_bits_to_float(h);
    if (!same_float(got, f16_reference(h))) ++mismatches_definition;
    const float eigen = static_cast<float>(Eigen::half(Eigen::half_impl::raw_uint16_to_half(h)));
    if (!same_float(got, eigen)) ++mismatches_eigen;
  }
  CHECK(mismatches_definition == 0);
  CHECK(mismatches_eigen == 0);
}

TEST_CASE("every dtype round-trips through a file, with odd, scalar and empty shapes") {
  temp_dir dir;
  std::vector<float> f32(3 * 5 * 7);
  for (std::size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<float>(i) * 0.37f - 11.0f;
  f32[3] = std::numeric_limits<float>::infinity();
  f32[4] = -0.0f;
  f32[5] = std::numeric_limits<float>::denorm_min();
  std::vector<bf16> b16(13);
  for (std::size_t i = 0; i < b16.size(); ++i) b16[i] = bf16(static_cast<float>(i) - 6.5f);
  b16[0] = bf16::from_bits(0x0001);  // subnormal
  const std::vector<std::uint16_t> f16 = {0x3c00, 0xc100, 0x7bff, 0x0001, 0x03ff, 0x7c00, 0xfc00};
  const std::vector<std::int64_t> i64 = {
      0, -1, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(), 42, 7};
  const float scalar = 3.5f;

  safetensors_writer w;
  w.add_f32("encoder.layer.0.weight", {3, 5, 7}, f32);
  w.add_bf16("embeddings.b16", {1, 1, 13}, std::span<const bf16>(b16));
  w.add("half", dtype::f16, {7}, std::as_bytes(std::span<const std::uint16_t>(f16)));
  w.add_i64("position_ids", {2, 3}, i64);
  w.add_f32("scalar", {}, std::span<const float>(&scalar, 1));
  w.add_bf16("empty.rows", {0, 4}, std::span<const bf16>());
  w.add_f32("empty.cols", {4, 0}, std::span<const float>());
  w.set_metadata("format", "pt");
  w.set_metadata("note", "caf\xc3\xa9");  // UTF-8 survives
  const fs::path path = dir.path() / "model.safetensors";
  w.write(path);
  CHECK(slurp(path) == [&] {
    const auto b = w.serialize();
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }());

  const safetensors_file file = safetensors_file::open(path);
  CHECK(file.size() == 7);
  CHECK(file.names() == std::vector<std::string>{"embeddings.b16", "empty.cols", "empty.rows", "encoder.layer.0.weight",
                                                 "half", "position_ids", "scalar"});
  CHECK(file.metadata() == std::map<std::string, std::string>{{"format", "pt"}, {"note", "caf\xc3\xa9"}});
  for (const auto& name : file.names()) {
    const auto& t = file.info(name);
    INFO(name);
    CHECK(t.name == name);
    CHECK(t.bytes.size() == static_cast<std::size_t>(t.numel) * cputrain::io::dtype_size(t.dtype));
    // The writer orders tensors so that each one is aligned to its element size within the mapping.
    CHECK(reinterpret_cast<std::uintptr_t>(t.bytes.data()) % cputrain::io::dtype_size(t.dtype) == 0);
  }

  const auto& w_info = file.info("encoder.layer.0.weight");
  CHECK(w_info.dtype == dtype::f32);
  CHECK(w_info.shape == std::vector<std::int64_t>{3, 5, 7});
  CHECK(w_info.numel == 105);
  std::vector<float> f32_back(105);
  file.read_float("encoder.layer.0.weight", f32_back);
  CHECK(std::memcmp(f32_back.data(), f32.data(), f32.size() * 4) == 0);

  CHECK(file.info("embeddings.b16").shape == std::vector<std::int64_t>{1, 1, 13});
  std::vector<float> b16_back(13);
  file.read_float("embeddings.b16", b16_back);
  for (std::size_t i = 0; i < b16.size(); ++i) CHECK(same_float(b16_back[i], static_cast<float>(b16[i])));

  std::vector<float> f16_back(7);
  file.read_float("half", f16_back);
  CHECK(f16_back[0] == 1.0f);
  CHECK(f16_back[1] == -2.5f);
  CHECK(f16_back[2] == 65504.0f);
  CHECK(f16_back[3] == 0x1p-24f);
  CHECK(f16_back[4] == 1023.0f * 0x1p-24f);
  CHECK(f16_back[5] == std::numeric_limits<float>::infinity());
  CHECK(f16_back[6] == -std::numeric_limits<float>::infinity());

  std::vector<std::int64_t> i64_back(6);
  file.read_i64("position_ids", i64_back);
  CHECK(i64_back == i64);

  const auto& s = file.info("scalar");
  CHECK(s.shape.empty());
  CHECK(s.numel == 1);
  float scalar_back = 0;
  file.read_float("scalar", std::span<float>(&scalar_back, 1));
  CHECK(scalar_back == 3.5f);

  CHECK(file.info("empty.rows").numel == 0);
  CHECK(file.info("empty.rows").bytes.empty());
  CHECK(file.info("empty.cols").shape == std::vector<std::int64_t>{4, 0});
  file.read_float("empty.rows", std::span<float>());
  file.read_float("empty.cols", std::span<float>());
}

TEST_CASE("add_bf16 from floats rounds as cputrain::bf16 does") {
  const std::vector<float> values = {
      1.0f,   1.00390625f /* tie: rounds to even, 1.0 */, 1.01171875f, 3.14159265f, -0.0f,
      1e-40f, std::numeric_limits<float>::infinity()};
  safetensors_writer w;
  w.add_bf16("x", {static_cast<std::int64_t>(values.size())}, std::span<const float>(values));
  temp_dir dir;
  w.write(dir.path() / "x.safetensors");
  const auto file = safetensors_file::open(dir.path() / "x.safetensors");
  CHECK(file.info("x").dtype == dtype::bf16);
  std::vector<float> back(values.size());
  file.read_float("x", back);
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO(i);
    CHECK(same_float(back[i], static_cast<float>(bf16(values[i]))));
  }
  CHECK(back[1] == 1.0f);
}

TEST_CASE("the writer's bytes match a hand-computed file exactly") {
  SECTION("four dtypes and metadata") {
    safetensors_writer w;
    const float f[] = {1.0f, -2.0f};
    const std::int64_t i[] = {7};
    const bf16 h[] = {bf16(1.0f)};
    const std::uint16_t g[] = {0x3c00};  // F16 1.0
    // Added in an order unlike the file's, which is I64, F32, BF16, F16 (widest first), then by name.
    w.add_bf16("h", {1}, std::span<const bf16>(h));
    w.add("g", dtype::f16, {1}, std::as_bytes(std::span<const std::uint16_t>(g)));
    w.add_f32("w", {2}, f);
    w.add_i64("i", {1}, i);
    w.set_metadata("format", "pt");
    const std::string i_bytes("\x07\x00\x00\x00\x00\x00\x00\x00", 8), w_bytes("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8),
        h_bytes("\x80\x3f", 2), g_bytes("\x00\x3c", 2);
    // The checksums from xxHash itself, printed independently of the writer's hex code; keys sorted, as the
    // writer's std::map keeps them.
    const auto xxh3 = [](const std::string& bytes) {
      char text[17];
      std::snprintf(text, sizeof text, "%016llx",
                    static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())));
      return std::string(text);
    };
    // 440 bytes of JSON, a multiple of 8 already (no padding) = 0x1b8.
    const std::string header = R"({"__metadata__":{"cputrain.checksum":"xxh3_64",)"
                               R"("cputrain.xxh3_64.g":")" + xxh3(g_bytes) + R"(",)"
                               R"("cputrain.xxh3_64.h":")" + xxh3(h_bytes) + R"(",)"
                               R"("cputrain.xxh3_64.i":")" + xxh3(i_bytes) + R"(",)"
                               R"("cputrain.xxh3_64.w":")" + xxh3(w_bytes) + R"(",)"
                               R"("format":"pt"},)"
                               R"("i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
                               R"("w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                               R"("h":{"dtype":"BF16","shape":[1],"data_offsets":[16,18]},)"
                               R"("g":{"dtype":"F16","shape":[1],"data_offsets":[18,20]}})";
    REQUIRE(header.size() == 440);
    const std::string expected = std::string("\xb8\x01\x00\x00\x00\x00\x00\x00", 8) + header +
                                 i_bytes +  // i = 7
                                 w_bytes +  // w = 1.0f, -2.0f
                                 h_bytes +  // h = bf16 1.0
                                 g_bytes;   // g = f16 1.0
    REQUIRE(expected.size() == 468);
    const auto bytes = w.serialize();
    CHECK(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()) == expected);
  }
  SECTION("no tensors: the same bytes as the format's own empty file") {
    const auto bytes = safetensors_writer().serialize();
    CHECK(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()) ==
          std::string("\x08\x00\x00\x00\x00\x00\x00\x00{}      ", 16));
  }
  SECTION("metadata only") {
    safetensors_writer w;
    w.set_metadata("framework", "pt");
    const auto bytes = w.serialize();
    CHECK(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()) ==
          std::string("\x28\x00\x00\x00\x00\x00\x00\x00", 8) + R"({"__metadata__":{"framework":"pt"}})" + "     ");
  }
}

TEST_CASE("a file written by an independent writer (scripts/make_safetensors_reference.py) reads back exactly") {
  const auto file = safetensors_file::open(fs::path(CPUTRAIN_IO_TEST_DATA) / "reference.safetensors");
  CHECK(file.names() == std::vector<std::string>{"a.f16", "b.bf16", "c.f32", "d.i64", "e.scalar", "f.empty"});
  CHECK(file.metadata() ==
        std::map<std::string, std::string>{{"format", "pt"}, {"producer", "make_safetensors_reference.py"}});

  CHECK(file.info("a.f16").dtype == dtype::f16);
  CHECK(file.info("a.f16").shape == std::vector<std::int64_t>{2, 2});
  std::vector<float> a(4);
  file.read_float("a.f16", a);
  CHECK(a == std::vector<float>{1.0f, -2.5f, 65504.0f, 0x1p-24f});

  std::vector<float> b(3);
  file.read_float("b.bf16", b);
  CHECK(b == std::vector<float>{1.0f, -2.5f, 3.140625f});

  // This writer lays tensors out by name, so the F32 data starts at offset 14 — not 4-aligned.
  const auto& c_info = file.info("c.f32");
  CHECK(c_info.shape == std::vector<std::int64_t>{2, 3});
  CHECK(reinterpret_cast<std::uintptr_t>(c_info.bytes.data()) % 4 != 0);
  std::vector<float> c(6);
  file.read_float("c.f32", c);
  CHECK(c == std::vector<float>{0.5f, -1.25f, 3.0f, 100.0f, -0.0f, 1024.5f});
  CHECK(std::signbit(c[4]));

  std::vector<std::int64_t> d(2);
  file.read_i64("d.i64", d);
  CHECK(d == std::vector<std::int64_t>{-1, (std::int64_t{1} << 53) + 1});

  CHECK(file.info("e.scalar").shape.empty());
  float e = 0;
  file.read_float("e.scalar", std::span<float>(&e, 1));
  CHECK(e == 42.0f);

  CHECK(file.info("f.empty").shape == std::vector<std::int64_t>{0, 3});
  CHECK(file.info("f.empty").numel == 0);
}

TEST_CASE("BF16 data at an odd address (an unpadded header) is read correctly") {
  temp_dir dir;
  // 55 bytes of header, no padding: the data region starts at byte 63 of the file.
  const std::string header = R"({"x":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})";
  REQUIRE(header.size() == 55);
  const auto file = safetensors_file::open(put(dir, file_bytes(header, std::string("\x80\x3f\x20\xc0", 4))));
  CHECK(reinterpret_cast<std::uintptr_t>(file.info("x").bytes.data()) % 2 == 1);
  std::vector<float> x(2);
  file.read_float("x", x);
  CHECK(x == std::vector<float>{1.0f, -2.5f});
}

TEST_CASE("lookups and reads that do not fit throw io_error naming the file and the tensor") {
  temp_dir dir;
  safetensors_writer w;
  const std::vector<float> v(6, 1.0f);
  const std::vector<std::int64_t> ids = {1, 2};
  w.add_f32("bert.pooler.dense.bias", {2, 3}, v);
  w.add_i64("ids", {2}, ids);
  const fs::path path = dir.path() / "model.safetensors";
  w.write(path);
  const auto file = safetensors_file::open(path);

  CHECK_FALSE(file.contains("bert.pooler.dense.weight"));
  CHECK(file.contains("bert.pooler.dense.bias"));
  CHECK_THROWS_WITH(file.info("bert.pooler.dense.weight"),
                    Contains(path.string()) && Contains("\"bert.pooler.dense.weight\""));
  std::vector<float> five(5);
  CHECK_THROWS_WITH(file.read_float("bert.pooler.dense.bias", five),
                    Contains(path.string()) && Contains("\"bert.pooler.dense.bias\"") && Contains("6 elements") &&
                        Contains("[2, 3]") && Contains("holds 5"));
  std::vector<float> two(2);
  CHECK_THROWS_WITH(file.read_float("ids", two), Contains("\"ids\"") && Contains("I64"));
  std::vector<std::int64_t> six(6);
  CHECK_THROWS_WITH(file.read_i64("bert.pooler.dense.bias", six), Contains("F32") && Contains("not I64"));
  std::vector<std::int64_t> three(3);
  CHECK_THROWS_AS(file.read_i64("ids", three), io_error);
}

TEST_CASE("safetensors_file is move-only and keeps its mapping across moves") {
  static_assert(!std::is_copy_constructible_v<safetensors_file>);
  static_assert(std::is_nothrow_move_constructible_v<safetensors_file>);
  temp_dir dir;
  safetensors_writer w;
  const std::vector<float> v = {1.0f, 2.0f};
  w.add_f32("a", {2}, v);
  w.add_f32("b", {2}, v);
  w.write(dir.path() / "one.safetensors");
  w.write(dir.path() / "two.safetensors");
  auto first = safetensors_file::open(dir.path() / "one.safetensors");
  safetensors_file moved = std::move(first);
  std::vector<float> out(2);
  moved.read_float("a", out);
  CHECK(out == v);
  moved = safetensors_file::open(dir.path() / "two.safetensors");
  moved.read_float("b", out);
  CHECK(out == v);
  CHECK(moved.path() == dir.path() / "two.safetensors");
}

TEST_CASE("check_tensors lists every missing, misshapen and unexpected tensor in one error") {
  temp_dir dir;
  safetensors_writer w;
  const std::vector<float> buf(64, 0.0f);
  w.add_f32("embeddings.word", {4, 2}, std::span<const float>(buf).first(8));
  w.add_f32("pooler.weight", {2, 3}, std::span<const float>(buf).first(6));
  w.add_f32("qa.bias", {2}, std::span<const float>(buf).first(2));
  for (int i = 0; i < 25; ++i) w.add_f32("extra." + std::to_string(100 + i), {1}, std::span<const float>(buf).first(1));
  const fs::path path = dir.path() / "wrong.safetensors";
  w.write(path);
  const auto file = safetensors_file::open(path);

  const std::vector<expected_tensor> good = {{"embeddings.word", {4, 2}}, {"pooler.weight", {2, 3}}};
  std::vector<expected_tensor> all = good;
  all.push_back({"qa.bias", {2}});
  for (int i = 0; i < 25; ++i) all.push_back({"extra." + std::to_string(100 + i), {1}});
  CHECK_NOTHROW(check_tensors(file, all));

  const std::vector<expected_tensor> expected = {{"embeddings.word", {4, 2}},
                                                 {"pooler.weight", {3, 2}},
                                                 {"qa.weight", {2, 768}},
                                                 {"qa.bias", {}},
                                                 {"cls.bias", {30522}}};
  std::string message;
  try {
    check_tensors(file, expected);
  } catch (const io_error& e) {
    message = e.what();
  }
  INFO(message);
  CHECK_THAT(message, Contains(path.string()));
  CHECK_THAT(message, Contains("2 missing") && Contains("2 with the wrong shape") && Contains("25 unexpected"));
  CHECK_THAT(message, Contains("missing: \"qa.weight\"") && Contains("missing: \"cls.bias\""));
  CHECK_THAT(message, Contains("\"pooler.weight\": expected [3, 2], found [2, 3]"));
  CHECK_THAT(message, Contains("\"qa.bias\": expected [], found [2]"));
  CHECK_THAT(message, Contains("unexpected: \"extra.100\" [1]") && Contains("unexpected: \"extra.119\""));
  CHECK_THAT(message, !Contains("\"extra.120\"") && Contains("... and 5 more unexpected"));
  CHECK_THAT(message, !Contains("\"embeddings.word\""));
}

TEST_CASE("the writer rejects bad tensors with usage_error") {
  safetensors_writer w;
  const std::vector<float> six(6, 0.0f);
  w.add_f32("a", {2, 3}, six);
  CHECK_THROWS_WITH(w.add_f32("a", {6}, six), Contains("\"a\"") && Contains("already added"));
  CHECK_THROWS_AS(w.add_f32("", {6}, six), usage_error);
  CHECK_THROWS_WITH(w.add_f32("__metadata__", {6}, six), Contains("reserved"));
  CHECK_THROWS_WITH(w.add_f32("b", {2, 2}, six),
                    Contains("\"b\"") && Contains("[2, 2]") && Contains("needs 16 bytes") && Contains("24 were given"));
  CHECK_THROWS_WITH(w.add_f32("c", {-2, -3}, six), Contains("negative"));
  CHECK_THROWS_WITH(w.add("d", dtype::i64, {std::int64_t{1} << 62, 4}, std::span<const std::byte>()),
                    Contains("overflow"));
  CHECK_THROWS_WITH(w.add_f32("bad\xff", {6}, six), Contains("UTF-8"));
  CHECK_THROWS_WITH(w.set_metadata("k", "\xc3"), Contains("UTF-8"));
  CHECK(w.size() == 1);
}

TEST_CASE("add_borrowed writes the caller's buffer without copying it at add time") {
  std::vector<float> live = {1.0f, 2.0f, 3.0f};
  safetensors_writer w;
  w.add_borrowed("x", dtype::f32, {3}, std::as_bytes(std::span<const float>(live)));
  live[1] = 20.0f;  // changes before write() are what gets written
  temp_dir dir;
  w.write(dir.path() / "b.safetensors");
  std::vector<float> back(3);
  safetensors_file::open(dir.path() / "b.safetensors").read_float("x", back);
  CHECK(back == std::vector<float>{1.0f, 20.0f, 3.0f});
}

TEST_CASE("writing into a missing directory throws io_error naming the path") {
  temp_dir dir;
  safetensors_writer w;
  const fs::path path = dir.path() / "missing" / "model.safetensors";
  CHECK_THROWS_WITH(w.write(path), Contains(path.string()) && Contains("No such file or directory"));
}

TEST_CASE("open() of a missing file, a directory or a file too short for the length throws io_error") {
  temp_dir dir;
  CHECK_THROWS_WITH(safetensors_file::open(dir.path() / "nope.safetensors"),
                    Contains("nope.safetensors") && Contains("No such file or directory"));
  CHECK_THROWS_WITH(safetensors_file::open(dir.path()),
                    Contains(dir.path().string()) && Contains("not a regular file"));
  CHECK_THAT(open_error(dir, ""), Contains("broken.safetensors") && Contains("0 bytes"));
  CHECK_THAT(open_error(dir, std::string("\x02\x00\x00", 3)), Contains("3 bytes"));
}

TEST_CASE("broken files: header length") {
  temp_dir dir;
  CHECK_THAT(open_error(dir, le64(100'000'001) + "{}"),
             Contains("broken.safetensors") && Contains("100000001") && Contains("limit"));
  CHECK_THAT(open_error(dir, le64(~std::uint64_t{0}) + "{}"), Contains("limit"));
  CHECK_THAT(open_error(dir, le64(20) + "{}"), Contains("header length 20") && Contains("past the end"));
  CHECK_THAT(open_error(dir, le64(0)), Contains("not valid JSON"));
}

TEST_CASE("broken files: the header is not a JSON object of valid UTF-8") {
  temp_dir dir;
  CHECK_THAT(open_error(dir, file_bytes(R"({"a":{"dtype":"F32",)")), Contains("not valid JSON"));
  CHECK_THAT(open_error(dir, file_bytes("[1, 2]")), Contains("not a JSON object") && Contains("array"));
  CHECK_THAT(open_error(dir, file_bytes("\"text\"")), Contains("not a JSON object"));
  CHECK_THAT(open_error(dir, file_bytes("{\"a\xff\": 1}")), Contains("not valid JSON") && Contains("UTF-8"));
  CHECK_THAT(open_error(dir, file_bytes("{\"a\xc3(\": 1}")), Contains("UTF-8"));
  CHECK_THAT(open_error(dir, file_bytes(std::string("{}\0", 3))), Contains("not valid JSON"));
  CHECK_THAT(open_error(dir, file_bytes(R"({"a":{"b":{"c":{"d":{"e":{}}}}}})")), Contains("nests deeper"));
  CHECK_THAT(open_error(dir, file_bytes(std::string(4000, '[') + std::string(4000, ']'))),
             Contains("broken.safetensors"));
}

TEST_CASE("broken files: duplicate names") {
  temp_dir dir;
  const std::string entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  CHECK_THAT(open_error(dir, file_bytes(R"({"w":)" + entry + R"(,"w":)" + entry + "}", f32_bytes({1}))),
             Contains("broken.safetensors") && Contains("tensor name \"w\" appears twice"));
  CHECK_THAT(open_error(dir, file_bytes(R"({"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                        f32_bytes({1}))),
             Contains("\"dtype\" appears twice"));
  CHECK_THAT(open_error(dir, file_bytes(R"({"__metadata__":{"k":"a","k":"b"}})")), Contains("\"k\" appears twice"));
}

TEST_CASE("broken files: entries with missing or mistyped fields") {
  temp_dir dir;
  // Each message must name the file and the tensor; the caller checks the problem.
  const auto one = [&](const std::string& entry, const std::string& data = f32_bytes({1})) {
    const std::string message = open_error(dir, file_bytes(R"({"bert.pooler.dense.weight":)" + entry + "}", data));
    CHECK_THAT(message, Contains("broken.safetensors") && Contains("\"bert.pooler.dense.weight\""));
    return message;
  };
  CHECK_THAT(one("[1, 2]"), Contains("not an object"));
  CHECK_THAT(one(R"({"shape":[1],"data_offsets":[0,4]})"), Contains("missing \"dtype\""));
  CHECK_THAT(one(R"({"dtype":5,"shape":[1],"data_offsets":[0,4]})"), Contains("\"dtype\" is 5"));
  CHECK_THAT(one(R"({"dtype":"F128","shape":[1],"data_offsets":[0,4]})"), Contains("unknown dtype"));
  CHECK_THAT(one(R"({"dtype":"F64","shape":[1],"data_offsets":[0,8]})", f32_bytes({1, 2})),
             Contains("unsupported dtype F64 for tensor"));
  CHECK_THAT(one(R"({"dtype":"F32","data_offsets":[0,4]})"), Contains("missing \"shape\""));
  CHECK_THAT(one(R"({"dtype":"F32","shape":1,"data_offsets":[0,4]})"), Contains("not an array"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), Contains("-1"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1.0],"data_offsets":[0,4]})"), Contains("not a non-negative integer"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":["1"],"data_offsets":[0,4]})"), Contains("\"1\""));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1e30],"data_offsets":[0,4]})"), Contains("weight"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,4]})"), Contains("weight"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]})"), Contains("overflow"));
  CHECK_THAT(one(R"({"dtype":"I64","shape":[2305843009213693952],"data_offsets":[0,4]})"),
             Contains("overflow"));  // the element count fits, the byte count does not
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1]})"), Contains("missing \"data_offsets\""));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})"), Contains("two non-negative"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4,8]})"), Contains("two non-negative"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})"), Contains("two non-negative"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4.0]})"), Contains("two non-negative"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":{"begin":0}})"), Contains("two non-negative"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":[4,0]})"), Contains("begin after"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":[0,8]})"),
             Contains("run past the end of the data region (4 bytes)"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]})"), Contains("past the end"));
}

TEST_CASE("broken files: byte length that does not match shape x dtype") {
  temp_dir dir;
  const std::string message = open_error(
      dir, file_bytes(R"({"bert.pooler.dense.weight":{"dtype":"F32","shape":[768,768],"data_offsets":[0,100]}})",
                      std::string(100, '\0')));
  CHECK_THAT(message, Contains("broken.safetensors: tensor \"bert.pooler.dense.weight\": data_offsets [0, 100] hold "
                               "100 bytes but shape [768, 768] x F32 needs 2359296"));
}

TEST_CASE("broken files: tensors that overlap, leave holes or leave trailing bytes") {
  temp_dir dir;
  const std::string a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  CHECK_THAT(open_error(dir, file_bytes("{" + a + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                        std::string(12, '\0'))),
             Contains("\"b\"") && Contains("overlap tensor \"a\""));
  CHECK_THAT(open_error(dir, file_bytes("{" + a + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                        std::string(8, '\0'))),
             Contains("overlap"));
  // A zero-size tensor inside another one is an overlap too: the reference reader rejects it as well.
  CHECK_THAT(open_error(dir, file_bytes("{" + a + R"(,"z":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                                        std::string(8, '\0'))),
             Contains("\"z\"") && Contains("overlap"));
  CHECK_THAT(open_error(dir, file_bytes("{" + a + R"(,"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                                        std::string(16, '\0'))),
             Contains("bytes [8, 12)") && Contains("belong to no tensor") && Contains("\"b\""));
  CHECK_THAT(
      open_error(dir, file_bytes(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0'))),
      Contains("bytes [0, 4)"));
  CHECK_THAT(open_error(dir, file_bytes("{" + a + "}", std::string(9, '\0'))),
             Contains("9 bytes") && Contains("trailing"));
  CHECK_THAT(open_error(dir, file_bytes("{}", "x")), Contains("trailing"));
  // Touching zero-size tensors at the boundaries are fine.
  const fs::path ok = put(dir, file_bytes("{" + a + R"(,"z":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)" +
                                              R"("y":{"dtype":"BF16","shape":[0,5],"data_offsets":[0,0]}})",
                                          std::string(8, '\0')));
  CHECK(safetensors_file::open(ok).size() == 3);
}

TEST_CASE("broken files: metadata that is not an object of strings") {
  temp_dir dir;
  CHECK_THAT(open_error(dir, file_bytes(R"({"__metadata__":{"format":"pt","epoch":3}})")),
             Contains("broken.safetensors") && Contains("\"epoch\"") && Contains("not a string"));
  CHECK_THAT(open_error(dir, file_bytes(R"({"__metadata__":["pt"]})")), Contains("\"__metadata__\" is array"));
  // null is how the reference implementation reads "no metadata".
  const auto file = safetensors_file::open(put(dir, file_bytes(R"({"__metadata__":null})")));
  CHECK(file.metadata().empty());
  CHECK(file.size() == 0);
}

TEST_CASE("header padding: trailing spaces are allowed, as writers pad to 8 bytes") {
  temp_dir dir;
  const auto file =
      safetensors_file::open(put(dir, file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}     )"
                                                 "\n\t ",
                                                 f32_bytes({2.5f}))));
  float a = 0;
  file.read_float("a", std::span<float>(&a, 1));
  CHECK(a == 2.5f);
}

TEST_CASE("every truncation and many byte flips of a valid file either open or throw io_error, never crash") {
  temp_dir dir;
  safetensors_writer w;
  const std::vector<float> f = {1.0f, 2.0f, 3.0f};
  const std::vector<std::int64_t> ids = {5, 6};
  const std::vector<bf16> h = {bf16(1.0f), bf16(2.0f)};
  w.add_f32("f", {3}, f);
  w.add_i64("i", {2}, ids);
  w.add_bf16("h", {2}, std::span<const bf16>(h));
  w.set_metadata("m", "v");
  const auto raw = w.serialize();
  const std::string good(reinterpret_cast<const char*>(raw.data()), raw.size());

  // Reads everything a successfully opened file claims to hold: under ASan, any out-of-bounds span would show.
  const auto exercise = [&](const std::string& bytes) {
    const fs::path p = put(dir, bytes, "fuzz.safetensors");
    try {
      const auto file = safetensors_file::open(p);
      for (const auto& name : file.names()) {
        const auto& t = file.info(name);
        if (t.dtype == dtype::i64) {
          std::vector<std::int64_t> out(static_cast<std::size_t>(t.numel));
          file.read_i64(name, out);
        } else {
          std::vector<float> out(static_cast<std::size_t>(t.numel));
          file.read_float(name, out);
        }
      }
      return 1;
    } catch (const io_error&) {
      return 0;
    }
  };
  int opened = 0;
  for (std::size_t len = 0; len < good.size(); ++len) opened += exercise(good.substr(0, len));
  CHECK(opened == 0);  // every strict prefix breaks the tiling rule at least
  CHECK(exercise(good) == 1);

  const unsigned char flips[] = {0x00, 0xff, '"', '1', '9', '-', ' ', '{', ']'};
  int flipped_open = 0;
  for (std::size_t pos = 0; pos < good.size(); ++pos) {
    for (unsigned char c : flips) {
      std::string bad = good;
      bad[pos] = static_cast<char>(c);
      flipped_open += exercise(bad);
    }
  }
  // Flips in the data region (and some in the padding) still give valid files.
  CHECK(flipped_open > 0);
}

TEST_CASE("a file cut short at any length names the file and says it is truncated") {
  // A copy or download that stopped early is the most common broken model.safetensors: whatever the cut, the
  // message must point the user at the file and the cause, not at a tensor's offsets alone.
  temp_dir dir;
  safetensors_writer w;
  const std::vector<float> f(6, 1.5f);
  const std::vector<std::int64_t> ids = {5, 6};
  w.add_f32("bert.embeddings.word_embeddings.weight", {2, 3}, f);
  w.add_i64("ids", {2}, ids);
  const auto raw = w.serialize();
  const std::string good(reinterpret_cast<const char*>(raw.data()), raw.size());
  for (std::size_t len = 0; len < good.size(); ++len) {
    INFO("cut at " << len << " of " << good.size() << " bytes");
    const std::string message = open_error(dir, good.substr(0, len));
    CHECK_THAT(message, Contains("broken.safetensors: "));
    if (len < 8) {
      CHECK_THAT(message, Contains(std::to_string(len) + " bytes, too few"));
    } else {
      CHECK_THAT(message, Contains("the file is truncated"));
    }
  }
}

TEST_CASE("dtypes cputrain does not compute with are refused by name, before anything is read") {
  // I32, U8, BOOL and F64 are valid safetensors: the message must say "unsupported" (not "broken"), name the
  // dtype and the tensor, and come from open(), so no caller ever reinterprets their bytes as floats.
  temp_dir dir;
  struct unsupported {
    std::string dtype;
    std::size_t element_size;
  };
  for (const auto& u : {unsupported{"I32", 4}, unsupported{"U8", 1}, unsupported{"BOOL", 1}, unsupported{"F64", 8},
                        unsupported{"I8", 1}, unsupported{"U16", 2}}) {
    INFO(u.dtype);
    const std::size_t bytes = 6 * u.element_size;
    const std::string header = R"({"bert.embeddings.word_embeddings.weight":{"dtype":")" + u.dtype +
                               R"(","shape":[2,3],"data_offsets":[0,)" + std::to_string(bytes) + "]}}";
    CHECK_THAT(open_error(dir, file_bytes(header, std::string(bytes, '\0'))),
               Contains("broken.safetensors") && Contains("unsupported dtype " + u.dtype) &&
                   Contains("\"bert.embeddings.word_embeddings.weight\"") && Contains("F32, BF16, F16 and I64"));
  }
}

}  // namespace safetensors_test
