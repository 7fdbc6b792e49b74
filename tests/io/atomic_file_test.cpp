// Tests for include/cputrain/io/atomic_file.hpp: exact contents, replacement that keeps the permission bits,
// nothing left behind on failure, errors that name the path and the system's reason, and concurrent writers
// that never produce a mixed file.
#include <catch2/catch.hpp>

#include "support/skip.hpp"
#include "support/temp_dir.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cputrain/io/atomic_file.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace atomic_file_test {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::io::atomic_file_sink;
using cputrain::io::io_error;
using cputrain::io::write_file_atomically;

namespace {

using cputrain::test::temp_dir;


std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// What write_without_override saw.
struct denied_write {
  int dropped = -1;      // capset's result (0: the capabilities are gone from that thread)
  int probe_errno = -1;  // errno of creating a file in the directory directly (0: it was created)
  bool threw = false;    // write_file_atomically threw io_error
  std::string message;   // its what()
};

// Runs write_file_atomically(<dir>/config.json) on a thread of its own that first drops CAP_DAC_OVERRIDE,
// CAP_DAC_READ_SEARCH and CAP_FOWNER from its effective set, so root is held to the permission bits like anyone.
// Linux keeps capabilities per thread (capset acts on the caller only): the rest of the process keeps them.
denied_write write_without_override(const fs::path& dir) {
  denied_write w;
  std::thread([&] {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return;
    for (const int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER}) {
      data[cap / 32].effective &= ~(1u << (cap % 32));
    }
    w.dropped = static_cast<int>(::syscall(SYS_capset, &header, data));
    if (w.dropped != 0) return;
    const fs::path probe = dir / "probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    w.probe_errno = fd < 0 ? errno : 0;
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
      return;
    }
    try {
      write_file_atomically(dir / "config.json", std::string_view("x"));
    } catch (const io_error& e) {
      w.threw = true;
      w.message = e.what();
    } catch (const std::exception& e) {
      w.message = std::string("not an io_error: ") + e.what();
    }
  }).join();
  return w;
}

struct producer_failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

TEST_CASE("write_file_atomically creates a file with exactly the given bytes, from text, bytes or a producer") {
  temp_dir dir;
  const fs::path text_file = dir.path() / "text.json";
  write_file_atomically(text_file, std::string_view("{\"a\": 1}\n"));
  CHECK(slurp(text_file) == "{\"a\": 1}\n");

  const std::vector<std::byte> bytes = {std::byte{0}, std::byte{0xff}, std::byte{'\n'}, std::byte{0}};
  const fs::path bytes_file = dir.path() / "bytes.bin";
  write_file_atomically(bytes_file, std::span<const std::byte>(bytes));
  CHECK(slurp(bytes_file) == std::string("\0\xff\n\0", 4));

  const fs::path produced = dir.path() / "produced.txt";
  std::uint64_t reported = 0;
  write_file_atomically(produced, [&](atomic_file_sink& out) {
    out.write("hello ");
    out.write(std::span<const std::byte>(bytes).first(0));
    out.write("world");
    reported = out.bytes_written();
  });
  CHECK(slurp(produced) == "hello world");
  CHECK(reported == 11);

  const fs::path empty = dir.path() / "empty";
  write_file_atomically(empty, std::string_view());
  CHECK(fs::file_size(empty) == 0);

  // Nothing but the four files: no temporary file is left behind.
  CHECK(entries(dir.path()) == std::vector<std::string>{"bytes.bin", "empty", "produced.txt", "text.json"});
}

TEST_CASE("write_file_atomically streams large outputs through mixed small and large writes intact") {
  temp_dir dir;
  std::string expected;
  const std::string big(3u << 20, 'x');  // larger than the sink's buffer: written directly
  const fs::path file = dir.path() / "big.bin";
  write_file_atomically(file, [&](atomic_file_sink& out) {
    for (int i = 0; i < 50000; ++i) {  // many small writes that cross buffer boundaries
      const std::string piece = std::to_string(i) + ",";
      out.write(piece);
      expected += piece;
    }
    out.write(big);
    expected += big;
    out.write("end");
    expected += "end";
  });
  CHECK(fs::file_size(file) == expected.size());
  CHECK(slurp(file) == expected);
}

TEST_CASE("write_file_atomically replaces an existing file and keeps its permission bits") {
  temp_dir dir;
  const fs::path file = dir.path() / "config.json";
  spit(file, "old contents that are longer than the new ones");
  REQUIRE(::chmod(file.c_str(), 0640) == 0);
  write_file_atomically(file, std::string_view("new"));
  CHECK(slurp(file) == "new");
  struct ::stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(entries(dir.path()) == std::vector<std::string>{"config.json"});
}

TEST_CASE("write_file_atomically leaves the old file untouched when the producer throws") {
  temp_dir dir;
  const fs::path file = dir.path() / "model.safetensors";
  spit(file, "old");
  CHECK_THROWS_AS(write_file_atomically(file,
                                        [](atomic_file_sink& out) {
                                          out.write(std::string(5u << 20, 'n'));  // some of it reached the disk
                                          throw producer_failed("disk full, say");
                                        }),
                  producer_failed);
  CHECK(slurp(file) == "old");
  CHECK(entries(dir.path()) == std::vector<std::string>{"model.safetensors"});
}

TEST_CASE("a reader that opened the old file keeps reading the old contents after the replacement") {
  temp_dir dir;
  const fs::path file = dir.path() / "weights.bin";
  spit(file, "version 1");
  std::ifstream reader(file, std::ios::binary);
  REQUIRE(reader);
  write_file_atomically(file, std::string_view("version 2, longer"));
  const std::string seen{std::istreambuf_iterator<char>(reader), std::istreambuf_iterator<char>()};
  CHECK(seen == "version 1");
  CHECK(slurp(file) == "version 2, longer");
}

TEST_CASE("write_file_atomically into a missing directory throws io_error naming the path and the reason") {
  temp_dir dir;
  const fs::path file = dir.path() / "no-such-dir" / "config.json";
  CHECK_THROWS_MATCHES(write_file_atomically(file, std::string_view("x")), io_error,
                       Catch::Matchers::Predicate<io_error>(
                           [&](const io_error& e) {
                             const std::string m = e.what();
                             return m.find(file.string()) != std::string::npos &&
                                    m.find("No such file or directory") != std::string::npos;
                           },
                           "names the path and ENOENT"));
  CHECK_FALSE(fs::exists(file.parent_path()));
}

TEST_CASE("write_file_atomically below a regular file throws io_error saying it is not a directory") {
  temp_dir dir;
  spit(dir.path() / "plain", "x");
  const fs::path file = dir.path() / "plain" / "config.json";
  CHECK_THROWS_WITH(write_file_atomically(file, std::string_view("x")),
                    Contains(file.string()) && Contains("Not a directory"));
}

TEST_CASE("write_file_atomically in a directory without write permission throws io_error with EACCES") {
  temp_dir dir;
  const fs::path locked = dir.path() / "locked";
  fs::create_directory(locked);
  REQUIRE(::chmod(locked.c_str(), 0500) == 0);
  // Root may write anywhere (CAP_DAC_OVERRIDE), and the tests run as root here: the write runs on a thread that
  // dropped those capabilities. No Catch assertion runs on that thread; it reports back.
  const denied_write w = write_without_override(locked);
  REQUIRE(w.dropped == 0);
  if (w.probe_errno == 0) CPUTRAIN_SKIP("the file system of " << locked.string() << " ignores permission bits");
  REQUIRE(w.probe_errno == EACCES);  // the directory really refuses a new file
  INFO("write_file_atomically said: " << w.message);
  CHECK(w.threw);
  CHECK_THAT(w.message, Contains((locked / "config.json").string()) && Contains("Permission denied"));
  CHECK(entries(locked).empty());
}

TEST_CASE("write_file_atomically over a directory fails at the rename and cleans up") {
  temp_dir dir;
  const fs::path target = dir.path() / "checkpoint-1";
  fs::create_directory(target);
  spit(target / "inside", "kept");
  CHECK_THROWS_WITH(write_file_atomically(target, std::string_view("x")),
                    Contains("cannot rename") && Contains(target.string()));
  CHECK(slurp(target / "inside") == "kept");
  CHECK(entries(dir.path()) == std::vector<std::string>{"checkpoint-1"});
}

TEST_CASE("write_file_atomically rejects a path without a file name") {
  CHECK_THROWS_AS(write_file_atomically(fs::path(), std::string_view("x")), io_error);
  CHECK_THROWS_AS(write_file_atomically(fs::path("somewhere/"), std::string_view("x")), io_error);
}

TEST_CASE("concurrent writers of one file leave exactly one complete version") {
  temp_dir dir;
  const fs::path file = dir.path() / "state.json";
  constexpr int writers = 8;
  std::vector<std::string> versions;
  for (int w = 0; w < writers; ++w) versions.push_back(std::string(200000 + w * 1000, static_cast<char>('a' + w)));
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < 5; ++round) write_file_atomically(file, std::string_view(versions[w]));
    });
  }
  for (auto& t : threads) t.join();
  const std::string final_contents = slurp(file);
  CHECK(std::find(versions.begin(), versions.end(), final_contents) != versions.end());
  CHECK(entries(dir.path()) == std::vector<std::string>{"state.json"});
}

}  // namespace atomic_file_test
