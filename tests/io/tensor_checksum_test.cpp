// Tests for include/cputrain/io/tensor_checksum.hpp and the checksums
// safetensors_writer stores and safetensors_file verifies: XXH3-64 known
// answers and the hex form, a checksum for every tensor equal to XXH3 of its
// bytes, a byte flipped in one tensor's data caught naming that tensor (and no
// other), files without checksums read as before, and forged or mangled
// checksum entries refused naming the file and the key.
#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <xxhash.h>
#include <nlohmann/json.hpp>

#include "cputrain/io/safetensors.hpp"
#include "cputrain/io/tensor_checksum.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace tensor_checksum_test {

namespace fs = std::filesystem;
namespace io = cputrain::io;
using Catch::Matchers::Contains;
using cputrain::test::temp_dir;

namespace {

fs::path put(const fs::path& p, const std::string& bytes) {
  fs::remove(p);
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p;
}

std::uint64_t header_length(const std::string& file) {
  std::uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  return n;
}

nlohmann::json header_of(const std::string& file) { return nlohmann::json::parse(file.substr(8, header_length(file))); }

/// Offset in the file of the first byte of tensor `name`'s data, read from the
/// header independently of the reader.
std::size_t data_offset(const std::string& file, const std::string& name) {
  return static_cast<std::size_t>(8 + header_length(file) +
                                  header_of(file)[name]["data_offsets"][0].get<std::uint64_t>());
}

/// A file of two F32 tensors "a" (4 values) and "b" (3 values), as the writer
/// makes it.
std::string two_tensor_file() {
  io::safetensors_writer w;
  const std::vector<float> a = {1.0f, 2.0f, 3.0f, 4.0f}, b = {-1.0f, 0.5f, 8.0f};
  w.add_f32("a", {2, 2}, a);
  w.add_f32("b", {3}, b);
  w.set_metadata("format", "pt");
  const auto bytes = w.serialize();
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// A file from its header text and data region, padded like the writer pads.
std::string handmade(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s(values.size() * 4, '\0');
  std::memcpy(s.data(), values.begin(), s.size());
  return s;
}

std::string open_error(const fs::path& p) {
  try {
    (void)io::safetensors_file::open(p);
  } catch (const io::io_error& e) {
    return e.what();
  }
  return "<open() did not throw>";
}

std::string verify_error(const fs::path& p) {
  try {
    io::safetensors_file::open(p).verify_checksums();
  } catch (const io::io_error& e) {
    return e.what();
  }
  return "<verify_checksums() did not throw>";
}

}  // namespace

TEST_CASE("XXH3-64 known answers and the 16-digit hex form") {
  CHECK(io::tensor_checksum({}) == 0x2d06800538d394c2ULL);  // XXH3_64bits of no bytes, as xxHash documents it
  const std::string abc = "abc";
  CHECK(io::tensor_checksum(std::as_bytes(std::span<const char>(abc))) == XXH3_64bits("abc", 3));
  CHECK(io::checksum_hex(0x2d06800538d394c2ULL) == "2d06800538d394c2");
  CHECK(io::checksum_hex(0) == "0000000000000000");
  CHECK(io::checksum_hex(~0ULL) == "ffffffffffffffff");
  CHECK(io::parse_checksum_hex("2d06800538d394c2") == 0x2d06800538d394c2ULL);
  CHECK(io::parse_checksum_hex("00000000000000ff") == 0xffULL);
  for (const char* bad : {"", "2d06800538d394c", "2d06800538d394c20", "2D06800538D394C2", "2d06800538d394cg",
                          " 2d06800538d394c", "0x06800538d394c2"}) {
    INFO(bad);
    CHECK_FALSE(io::parse_checksum_hex(bad).has_value());
  }
  CHECK(io::checksum_key("bert.pooler.dense.weight") == "cputrain.xxh3_64.bert.pooler.dense.weight");
}

TEST_CASE(
    "a written file has a checksum for every tensor, equal to XXH3-64 of "
    "the tensor's bytes") {
  temp_dir dir;
  const std::string file = two_tensor_file();
  const nlohmann::json header = header_of(file);
  const auto& meta = header["__metadata__"];
  CHECK(meta["cputrain.checksum"] == "xxh3_64");
  CHECK(meta["format"] == "pt");  // what transformers looks for, untouched
  for (const std::string name : {"a", "b"}) {
    const auto begin = data_offset(file, name);
    const auto size =
        header[name]["data_offsets"][1].get<std::size_t>() - header[name]["data_offsets"][0].get<std::size_t>();
    char expected[17];
    std::snprintf(expected, sizeof expected, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(file.data() + begin, size)));
    CHECK(meta["cputrain.xxh3_64." + name] == std::string(expected));
  }
  CHECK(meta.size() == 4);

  const auto st = io::safetensors_file::open(put(dir.path() / "ok.safetensors", file));
  CHECK(st.has_checksum("a"));
  CHECK(st.has_checksum("b"));
  CHECK(st.metadata() == std::map<std::string, std::string>{{"format", "pt"}});  // the checksums are not user data
  CHECK_NOTHROW(st.verify_checksums());
}

TEST_CASE(
    "a byte flipped in one tensor's data is caught naming the file and "
    "that tensor") {
  temp_dir dir;
  const std::string good = two_tensor_file();
  for (const std::string damaged : {"a", "b"}) {
    const std::string other = damaged == "a" ? "b" : "a";
    std::string bad = good;
    bad[data_offset(good, damaged) + 5] ^= 0x10;
    const fs::path p = put(dir.path() / "model.safetensors", bad);
    const std::string message = verify_error(p);
    INFO(message);
    CHECK_THAT(message, Contains(p.string()) && Contains("tensor \"" + damaged + "\"") &&
                            Contains("does not match the checksum written with it") && Contains("expected") &&
                            Contains("actual"));
    CHECK_THAT(message, !Contains("\"" + other + "\""));
    const auto st = io::safetensors_file::open(p);  // opening does not hash: the damage shows when verified
    CHECK_NOTHROW(st.verify_checksum(other));
    CHECK_THROWS_AS(st.verify_checksum(damaged), io::io_error);
  }
}

TEST_CASE(
    "files without checksums (Hugging Face's, older cputrain's) read as "
    "before, damaged or not") {
  temp_dir dir;
  const std::string data = f32_bytes({1.0f, 2.0f});
  std::string file =
      handmade(R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data);
  file[file.size() - 1] ^= 0x01;  // nothing can tell
  const auto st = io::safetensors_file::open(put(dir.path() / "hf.safetensors", file));
  CHECK_FALSE(st.has_checksum("w"));
  CHECK_NOTHROW(st.verify_checksums());
  std::vector<float> w(2);
  st.read_float("w", w);
  CHECK(w[0] == 1.0f);
  // The reference fixture made by Python's safetensors has none either.
  const auto reference = io::safetensors_file::open(fs::path(CPUTRAIN_IO_TEST_DATA) / "reference.safetensors");
  CHECK_NOTHROW(reference.verify_checksums());
}

TEST_CASE(
    "forged or mangled checksum entries are refused naming the file and "
    "the key") {
  temp_dir dir;
  const std::string data = f32_bytes({1.0f, 2.0f});
  const std::string hex = io::checksum_hex(XXH3_64bits(data.data(), data.size()));
  const std::string tensor = R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const auto error_for = [&](const std::string& metadata) {
    return open_error(
        put(dir.path() / "forged.safetensors", handmade("{\"__metadata__\":{" + metadata + "}," + tensor + "}", data)));
  };
  CHECK(error_for(R"("cputrain.xxh3_64.w":")" + hex + R"(")") == "<open() did not throw>");
  CHECK(error_for(R"("cputrain.checksum":"xxh3_64","cputrain.xxh3_64.w":")" + hex + R"(")") ==
        "<open() did not throw>");

  CHECK_THAT(error_for(R"("cputrain.xxh3_64.w":")" + hex + R"(","cputrain.xxh3_64.ghost":")" + hex + R"(")"),
             Contains("forged.safetensors") && Contains("\"cputrain.xxh3_64.ghost\"") &&
                 Contains("a tensor the file does not have"));
  CHECK_THAT(error_for(R"("cputrain.xxh3_64.w":"DEADBEEF")"),
             Contains("forged.safetensors") && Contains("\"cputrain.xxh3_64.w\"") && Contains("\"DEADBEEF\"") &&
                 Contains("16 lowercase hex digits"));
  CHECK_THAT(error_for(R"("cputrain.checksum":"md5","cputrain.xxh3_64.w":")" + hex + R"(")"),
             Contains("forged.safetensors") && Contains("\"cputrain.checksum\"") && Contains("\"md5\""));
  CHECK_THAT(error_for(R"("cputrain.checksum":"xxh3_64")"), Contains("forged.safetensors") &&
                                                                Contains("tensor \"w\" has no checksum") &&
                                                                Contains("\"cputrain.xxh3_64.w\""));
  // A hostile name is quoted, never printed raw.
  CHECK_THAT(error_for(R"("cputrain.xxh3_64.\n\u0001":")" + hex + R"(")"), Contains(R"(\n\u0001)"));
}

TEST_CASE("the writer keeps the checksum keys for itself") {
  io::safetensors_writer w;
  CHECK_THROWS_AS(w.set_metadata("cputrain.checksum", "none"), cputrain::usage_error);
  CHECK_THROWS_AS(w.set_metadata("cputrain.xxh3_64.w", "0000000000000000"), cputrain::usage_error);
  CHECK_NOTHROW(w.set_metadata("cputrain.note", "free for users"));
}

}  // namespace tensor_checksum_test
