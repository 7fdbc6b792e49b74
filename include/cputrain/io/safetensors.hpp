// Hugging Face safetensors files, read memory-mapped and fully validated, written atomically: safetensors_file
// (open, names, info, read_float for F32/BF16/F16, read_i64, verify_checksums), check_tensors and
// safetensors_writer, which stores a checksum per tensor (io/tensor_checksum.hpp). A file is data from outside:
// every length and offset is checked before anything is read, and any violation throws io_error.
#pragma once

#include "cputrain/io/tensor_checksum.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/io_error.hpp"

namespace cputrain::io {

static_assert(std::endian::native == std::endian::little,
              "cputrain::io reads safetensors data in place, which needs a little-endian machine");

/// The element types cputrain reads and writes. The enumerator order is not the file's: see safetensors_writer.
enum class dtype { f32, bf16, f16, i64 };

/// Bytes per element.
[[nodiscard]] constexpr std::size_t dtype_size(dtype t) noexcept {
  switch (t) {
    case dtype::f32: return 4;
    case dtype::bf16: return 2;
    case dtype::f16: return 2;
    case dtype::i64: return 8;
  }
  return 0;
}

/// The name the safetensors header uses: "F32", "BF16", "F16", "I64".
[[nodiscard]] constexpr std::string_view to_string(dtype t) noexcept {
  switch (t) {
    case dtype::f32: return "F32";
    case dtype::bf16: return "BF16";
    case dtype::f16: return "F16";
    case dtype::i64: return "I64";
  }
  return "?";
}

/// The dtype a header name stands for, or nothing for every other name (including valid safetensors dtypes that
/// cputrain does not handle, such as "F64"; see is_safetensors_dtype_name).
[[nodiscard]] constexpr std::optional<dtype> dtype_from_string(std::string_view name) noexcept {
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f16, dtype::i64}) {
    if (to_string(t) == name) return t;
  }
  return std::nullopt;
}

/// Whether `name` is a dtype of the safetensors format at all, so an error can say "unsupported" (a valid file
/// we cannot use) rather than "unknown" (a broken file).
[[nodiscard]] constexpr bool is_safetensors_dtype_name(std::string_view name) noexcept {
  constexpr std::string_view names[] = {"BOOL",    "U8",      "I8",  "I16",     "U16",     "F16", "BF16",
                                        "I32",     "U32",     "F32", "F64",     "I64",     "U64", "F8_E5M2",
                                        "F8_E4M3", "F8_E8M0", "F4",  "F6_E2M3", "F6_E3M2", "C64"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

/// One tensor of an open file. `bytes` points into the mapping and lives as long as the safetensors_file.
struct tensor_info {
  std::string name;
  io::dtype dtype = io::dtype::f32;
  /// empty for a scalar
  std::vector<std::int64_t> shape;
  /// product of shape (1 for a scalar)
  std::int64_t numel = 0;
  /// numel * dtype_size(dtype) bytes, aligned only as the file places them
  std::span<const std::byte> bytes;
};

/// What check_tensors expects to find.
struct expected_tensor {
  std::string name;
  std::vector<std::int64_t> shape;
};

namespace detail {

inline std::string quote_for_message(std::string_view s) { return cputrain::quote_for_message<nlohmann::json>(s); }

template <class Int>
std::string shape_text(std::span<const Int> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}
inline std::string shape_text(const std::vector<std::int64_t>& shape) {
  return shape_text(std::span<const std::int64_t>(shape));
}

/// IEEE 754 binary16 -> float, exact: subnormals become normal floats, Inf stays Inf, a NaN keeps its sign and
/// payload (so it stays a NaN).
[[nodiscard]] constexpr float f16_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, which a float holds exactly.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  // Rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// a * b, or nothing if it does not fit in a uint64.
[[nodiscard]] constexpr std::optional<std::uint64_t> checked_mul_u64(std::uint64_t a, std::uint64_t b) noexcept {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

/// Element count of a shape, or nothing if it (or its byte size) overflows what the file could describe.
[[nodiscard]] inline std::optional<std::uint64_t> checked_tensor_numel(std::span<const std::int64_t> shape,
                                                                       std::size_t element_size) {
  std::uint64_t n = 1;
  for (const std::int64_t d : shape) {
    const auto next = checked_mul_u64(n, static_cast<std::uint64_t>(d));
    if (!next) return std::nullopt;
    n = *next;
  }
  const auto bytes = checked_mul_u64(n, element_size);
  if (!bytes || *bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return n;
}

}  // namespace detail

/// A safetensors file, memory-mapped read-only. Move-only; unmapped on destruction.
class safetensors_file {
 public:
  /// Hugging Face's reader refuses headers above this size; so do we, so a hostile length cannot make us parse
  /// gigabytes of JSON.
  static constexpr std::uint64_t max_header_size = 100'000'000;

  /// Maps `path` and validates its header against the file (see the header comment). Throws io_error.
  [[nodiscard]] static safetensors_file open(const std::filesystem::path& path);

  safetensors_file(safetensors_file&& other) noexcept
      : path_(std::move(other.path_)),
        mapping_(std::exchange(other.mapping_, nullptr)),
        mapping_size_(std::exchange(other.mapping_size_, 0)),
        tensors_(std::move(other.tensors_)),
        metadata_(std::move(other.metadata_)),
        checksums_(std::move(other.checksums_)) {}
  safetensors_file& operator=(safetensors_file&& other) noexcept {
    if (this != &other) {
      unmap();
      path_ = std::move(other.path_);
      mapping_ = std::exchange(other.mapping_, nullptr);
      mapping_size_ = std::exchange(other.mapping_size_, 0);
      tensors_ = std::move(other.tensors_);
      metadata_ = std::move(other.metadata_);
      checksums_ = std::move(other.checksums_);
    }
    return *this;
  }
  safetensors_file(const safetensors_file&) = delete;
  safetensors_file& operator=(const safetensors_file&) = delete;
  ~safetensors_file() { unmap(); }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// Number of tensors.
  [[nodiscard]] std::size_t size() const noexcept { return tensors_.size(); }

  /// Tensor names, sorted.
  [[nodiscard]] std::vector<std::string> names() const;

  [[nodiscard]] bool contains(std::string_view name) const { return tensors_.find(name) != tensors_.end(); }

  /// The tensor called `name`; io_error naming the file and the tensor if there is none.
  [[nodiscard]] const tensor_info& info(std::string_view name) const {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) fail("no tensor named " + detail::quote_for_message(name));
    return it->second;
  }

  /// The "__metadata__" strings other than the checksums (empty if the file has none): what the writer was given.
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const noexcept { return metadata_; }

  /// Whether the file carries a checksum for tensor `name` (open() has checked the entry's form).
  [[nodiscard]] bool has_checksum(std::string_view name) const { return checksums_.find(name) != checksums_.end(); }

  /// Hashes every tensor that has a checksum and compares; io_error naming the file, the tensor and both values on
  /// the first mismatch. A file without checksums (Hugging Face's, older cputrain's) passes unread.
  void verify_checksums() const;

  /// As verify_checksums for one tensor; a tensor without a checksum passes.
  void verify_checksum(std::string_view name) const;

  /// Converts an F32, BF16 or F16 tensor to float into `out`, whose size must be the tensor's element count.
  void read_float(std::string_view name, std::span<float> out) const;

  /// Copies an I64 tensor into `out`, whose size must be the tensor's element count.
  void read_i64(std::string_view name, std::span<std::int64_t> out) const;

 private:
  explicit safetensors_file(std::filesystem::path path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& problem) const { throw io_error(path_.string() + ": " + problem); }
  [[noreturn]] void fail_tensor(std::string_view name, const std::string& problem) const {
    fail("tensor " + detail::quote_for_message(name) + ": " + problem);
  }

  void verify(const tensor_info& t, std::uint64_t expected) const {
    const std::uint64_t actual = tensor_checksum(t.bytes);
    if (actual != expected) {
      fail_tensor(t.name, "the data does not match the checksum written with it (xxh3_64 expected " +
                              checksum_hex(expected) + ", actual " + checksum_hex(actual) +
                              "): the file was damaged after it was written");
    }
  }

  void check_destination(const tensor_info& t, std::size_t size, const char* what) const {
    if (static_cast<std::uint64_t>(t.numel) != size) {
      fail_tensor(t.name, "has " + std::to_string(t.numel) + " elements (shape " + detail::shape_text(t.shape) +
                              ") but the destination holds " + std::to_string(size) + " " + what);
    }
  }

  void unmap() noexcept {
    if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
    mapping_ = nullptr;
    mapping_size_ = 0;
  }

  [[nodiscard]] std::span<const std::byte> file_bytes() const noexcept {
    return {static_cast<const std::byte*>(mapping_), mapping_size_};
  }

  void map();

  /// Reads the JSON header; rejects duplicate keys at any level (nlohmann would silently keep the last one, and
  /// a duplicate tensor name makes the file ambiguous) and nesting deeper than the format ever needs. Both throw
  /// from inside the parser, so a hostile header of a million nested brackets is refused at the fifth.
  [[nodiscard]] nlohmann::json parse_json(std::string_view text) const;

  void parse_header();

  /// The checksum entries, checked for form only (hashing waits for verify_checksums, so opening stays cheap): a
  /// key for a tensor the file lacks, a value that is not 16 lowercase hex digits, an unknown marker or, under the
  /// marker, a tensor without a checksum means a hostile or mangled header, refused here.
  void parse_checksums();

  void parse_metadata(const nlohmann::json& entry);

  /// A non-negative JSON integer; nothing for anything else (negative, 4.0, "4", ...).
  [[nodiscard]] static std::optional<std::uint64_t> unsigned_integer(const nlohmann::json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
    return std::nullopt;
  }

  struct placed_tensor {
    tensor_info info;
    std::uint64_t begin = 0, end = 0;  // data_offsets
  };

  [[nodiscard]] placed_tensor parse_entry(const std::string& name, const nlohmann::json& entry,
                                          std::uint64_t data_size) const;

  /// The tensors must cover the data region exactly once, like the reference implementation demands: no
  /// overlaps (two tensors sharing bytes would alias), no holes, nothing after the last tensor.
  void check_tiling(std::vector<placed_tensor>& placed, std::uint64_t data_size) const;

  std::filesystem::path path_;
  void* mapping_ = nullptr;
  std::size_t mapping_size_ = 0;
  std::map<std::string, tensor_info, std::less<>> tensors_;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, std::uint64_t, std::less<>> checksums_;
};

/// Checks that `file` holds exactly the tensors `expected` lists, with those shapes (dtypes are not checked:
/// read_float converts). On any difference throws ONE io_error listing every missing tensor, every tensor whose
/// shape differs (expected vs found) and the unexpected tensors (the first 20, then a count), so a user who
/// points at the wrong checkpoint sees the whole picture at once.
CPUTRAIN_DECL void check_tensors(const safetensors_file& file, std::span<const expected_tensor> expected);

/// Collects tensors and metadata, then writes one safetensors file atomically.
///
/// Layout, the same as Hugging Face's writer produces: "__metadata__" first (when set), then the tensors
/// ordered by dtype from the widest element to the narrowest (I64, F32, BF16, F16), by name within a dtype. With
/// the header padded with spaces to a multiple of 8 bytes, that order puts every tensor at an offset that is a
/// multiple of its element size, so a reader's mapping — ours included — gets naturally aligned data.
/// Each entry lists "dtype", "shape", "data_offsets" in that order. Every tensor's checksum goes into the metadata
/// (io/tensor_checksum.hpp), so a reader can tell damaged data from what was written; a file without tensors gets
/// none, staying byte for byte the format's own.
class safetensors_writer {
 public:
  /// Adds a tensor, copying `data` (numel * dtype_size bytes, row-major, little-endian). usage_error on an
  /// empty, reserved ("__metadata__"), non-UTF-8 or repeated name, a negative dimension, or a size mismatch.
  void add(std::string name, dtype type, std::vector<std::int64_t> shape, std::span<const std::byte> data);

  /// As add(), without the copy: `data` must stay alive and unchanged until the last write() returns. For
  /// checkpoints, where the flat parameter buffer already holds everything and a copy would double the memory.
  void add_borrowed(std::string name, dtype type, std::vector<std::int64_t> shape, std::span<const std::byte> data);

  void add_f32(std::string name, std::vector<std::int64_t> shape, std::span<const float> values) {
    add(std::move(name), dtype::f32, std::move(shape), std::as_bytes(values));
  }
  void add_bf16(std::string name, std::vector<std::int64_t> shape, std::span<const bf16> values) {
    add(std::move(name), dtype::bf16, std::move(shape), std::as_bytes(values));
  }
  /// Rounds `values` to bf16 (nearest even, as cputrain::bf16 does) and adds them as a BF16 tensor.
  void add_bf16(std::string name, std::vector<std::int64_t> shape, std::span<const float> values);
  void add_i64(std::string name, std::vector<std::int64_t> shape, std::span<const std::int64_t> values) {
    add(std::move(name), dtype::i64, std::move(shape), std::as_bytes(values));
  }

  /// Sets (or replaces) one "__metadata__" entry. usage_error if either string is not valid UTF-8, or the key is
  /// one the writer keeps for the checksums.
  void set_metadata(std::string key, std::string value);

  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

  /// The whole file as bytes — what write() puts on disk.
  [[nodiscard]] std::vector<std::byte> serialize() const;

  /// Writes the file atomically (see io/atomic_file.hpp). io_error naming the path and the reason on failure.
  void write(const std::filesystem::path& path) const;

 private:
  struct entry {
    std::string name;
    dtype type;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> owned;
    std::span<const std::byte> borrowed;
    [[nodiscard]] std::span<const std::byte> bytes() const {
      return owned.empty() ? borrowed : std::span<const std::byte>(owned);
    }
  };

  /// Position of a dtype in the file's data order (smaller first).
  static constexpr int data_rank(dtype t) noexcept {
    switch (t) {
      case dtype::i64: return 0;
      case dtype::f32: return 1;
      case dtype::bf16: return 2;
      case dtype::f16: return 3;
    }
    return 4;
  }

  static void check_utf8(const std::string& what, const std::string& s);

  void check(const std::string& name, dtype type, const std::vector<std::int64_t>& shape, std::size_t data_size) const;

  [[nodiscard]] std::map<std::string, std::string> metadata_with_checksums() const;

  template <class Out>
  void emit(const Out& out) const {
    std::vector<const entry*> order;
    order.reserve(entries_.size());
    for (const auto& e : entries_) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const entry* a, const entry* b) {
      return data_rank(a->type) != data_rank(b->type) ? data_rank(a->type) < data_rank(b->type) : a->name < b->name;
    });

    // ordered_json keeps insertion order, which is the data order chosen above.
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (const auto metadata = metadata_with_checksums(); !metadata.empty()) header["__metadata__"] = metadata;
    std::uint64_t offset = 0;
    for (const entry* e : order) {
      const std::uint64_t end = offset + e->bytes().size();
      nlohmann::ordered_json info = nlohmann::ordered_json::object();
      info["dtype"] = to_string(e->type);
      info["shape"] = e->shape;
      info["data_offsets"] = {offset, end};
      header[e->name] = std::move(info);
      offset = end;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');

    const std::uint64_t n = text.size();
    std::byte length[8];
    std::memcpy(length, &n, 8);
    out(std::span<const std::byte>(length));
    out(std::as_bytes(std::span<const char>(text)));
    for (const entry* e : order) out(e->bytes());
  }

  std::vector<entry> entries_;
  std::map<std::string, std::string> metadata_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {
/// A valid JSON value shown in a message, cut short so a hostile header cannot produce a 100 MB message.
inline std::string header_value_text(const nlohmann::json& value) { return json_text_for_message(value); }
}  // namespace detail

CPUTRAIN_DECL safetensors_file safetensors_file::open(const std::filesystem::path& path) {
  safetensors_file file(path);
  file.map();
  file.parse_header();
  return file;
}

CPUTRAIN_DECL std::vector<std::string> safetensors_file::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& [name, info] : tensors_) out.push_back(name);
  return out;
}

CPUTRAIN_DECL void safetensors_file::verify_checksums() const {
  for (const auto& [name, expected] : checksums_) verify(info(name), expected);
}

CPUTRAIN_DECL void safetensors_file::verify_checksum(std::string_view name) const {
  const tensor_info& t = info(name);
  if (const auto it = checksums_.find(name); it != checksums_.end()) verify(t, it->second);
}

CPUTRAIN_DECL void safetensors_file::read_float(std::string_view name, std::span<float> out) const {
  const tensor_info& t = info(name);
  if (t.dtype == io::dtype::i64) {
    fail("tensor " + detail::quote_for_message(name) +
         " is I64, not a floating-point type (F32, BF16 or F16) that read_float converts");
  }
  check_destination(t, out.size(), "floats");
  const std::size_t n = out.size();
  if (n == 0) return;
  switch (t.dtype) {
    case io::dtype::f32: std::memcpy(out.data(), t.bytes.data(), t.bytes.size()); return;
    case io::dtype::bf16:
      if (reinterpret_cast<std::uintptr_t>(t.bytes.data()) % alignof(bf16) == 0) {
        to_float(std::span<const bf16>(reinterpret_cast<const bf16*>(t.bytes.data()), n), out);
      } else {
        // Only a file whose writer did not align its tensors gets here; a bf16 pointer must be aligned.
        std::vector<bf16> aligned(n);
        std::memcpy(aligned.data(), t.bytes.data(), t.bytes.size());
        to_float(aligned, out);
      }
      return;
    case io::dtype::f16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, t.bytes.data() + 2 * i, 2);
        out[i] = detail::f16_bits_to_float(bits);
      }
      return;
    case io::dtype::i64: break;  // rejected above
  }
}

CPUTRAIN_DECL void safetensors_file::read_i64(std::string_view name, std::span<std::int64_t> out) const {
  const tensor_info& t = info(name);
  if (t.dtype != io::dtype::i64) {
    fail("tensor " + detail::quote_for_message(name) + " is " + std::string(to_string(t.dtype)) + ", not I64");
  }
  check_destination(t, out.size(), "int64 values");
  if (!out.empty()) std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
}

CPUTRAIN_DECL void safetensors_file::map() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    fail(std::string("cannot open: ") + std::strerror(err));
  }
  struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
  } closer{fd};
  struct ::stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    fail(std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) fail("not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < 8) {
    fail("file has " + std::to_string(size) + " bytes, too few for the 8-byte header length");
  }
  void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    fail(std::string("cannot mmap: ") + std::strerror(err));
  }
  mapping_ = p;
  mapping_size_ = static_cast<std::size_t>(size);
}

CPUTRAIN_DECL nlohmann::json safetensors_file::parse_json(std::string_view text) const {
  std::vector<std::set<std::string, std::less<>>> open_objects;
  const nlohmann::json::parser_callback_t callback = [&](int depth, nlohmann::json::parse_event_t event,
                                                         nlohmann::json& parsed) {
    using event_t = nlohmann::json::parse_event_t;
    // {name: {"shape": [dim]}} puts a dim at depth 3; nothing valid goes deeper.
    if (depth > 4) fail("header nests deeper than a safetensors header can");
    if (event == event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == event_t::key && !open_objects.empty() && parsed.is_string()) {
      auto& keys = open_objects.back();
      const auto& key = parsed.get_ref<const std::string&>();
      if (!keys.insert(key).second) {
        if (open_objects.size() == 1) fail("tensor name " + detail::quote_for_message(key) + " appears twice");
        fail("key " + detail::quote_for_message(key) + " appears twice in one object of the header");
      }
    }
    return true;
  };
  // nlohmann stops at a NUL byte as if the input ended there, which would hide whatever follows it; JSON
  // text cannot contain a raw NUL anywhere, so one is an error.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    fail("header is not valid JSON: a NUL byte at offset " + std::to_string(nul));
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's message says where and what ("ill-formed UTF-8 byte", "unexpected end of input").
    fail(std::string("header is not valid JSON: ") + e.what());
  }
}

CPUTRAIN_DECL void safetensors_file::parse_header() {
  const std::span<const std::byte> file = file_bytes();
  std::uint64_t header_size;
  std::memcpy(&header_size, file.data(), 8);
  if (header_size > max_header_size) {
    fail("header length " + std::to_string(header_size) + " exceeds the " + std::to_string(max_header_size) +
         "-byte limit");
  }
  if (header_size > file.size() - 8) {
    fail("header length " + std::to_string(header_size) + " runs past the end of the file (" +
         std::to_string(file.size()) + " bytes): the file is truncated, or not safetensors");
  }
  const std::string_view text(reinterpret_cast<const char*>(file.data() + 8), header_size);
  const nlohmann::json header = parse_json(text);
  if (!header.is_object()) fail("header is not a JSON object but " + std::string(header.type_name()));

  const std::span<const std::byte> data = file.subspan(8 + header_size);
  std::vector<placed_tensor> placed;
  placed.reserve(header.size());
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      parse_metadata(entry);
      continue;
    }
    placed.push_back(parse_entry(name, entry, data.size()));
  }
  check_tiling(placed, data.size());
  // Only now, with every offset checked against the data region, do spans into the mapping exist.
  for (placed_tensor& p : placed) {
    p.info.bytes = data.subspan(p.begin, p.end - p.begin);
    std::string name = p.info.name;
    tensors_.emplace(std::move(name), std::move(p.info));  // parse_json rejected duplicate names
  }
  parse_checksums();
}

CPUTRAIN_DECL void safetensors_file::parse_checksums() {
  bool marked = false;
  for (auto it = metadata_.begin(); it != metadata_.end();) {
    const auto& [key, value] = *it;
    if (key != checksum_marker_key && !key.starts_with(checksum_key_prefix)) {
      ++it;
      continue;
    }
    if (key == checksum_marker_key) {
      if (value != checksum_marker_value) {
        fail("metadata key " + detail::quote_for_message(key) + " names the checksum " +
             detail::quote_for_message(value) + ", which this cputrain does not know (it writes \"" +
             std::string(checksum_marker_value) + "\")");
      }
      marked = true;
      it = metadata_.erase(it);
      continue;
    }
    const std::string_view name = std::string_view(key).substr(checksum_key_prefix.size());
    if (!contains(name)) {
      fail("metadata key " + detail::quote_for_message(key) +
           " holds a checksum for a tensor the file does not have");
    }
    const auto value_parsed = parse_checksum_hex(value);
    if (!value_parsed) {
      fail("metadata key " + detail::quote_for_message(key) + " holds " + detail::quote_for_message(value) +
           ", not a checksum of 16 lowercase hex digits");
    }
    checksums_.emplace(std::string(name), *value_parsed);
    it = metadata_.erase(it);
  }
  if (!marked) return;
  for (const auto& [name, info] : tensors_) {
    if (!checksums_.contains(name)) {
      fail("tensor " + detail::quote_for_message(name) + " has no checksum (no metadata key " +
           detail::quote_for_message(checksum_key(name)) + ") although the file says every tensor has one");
    }
  }
}

CPUTRAIN_DECL void safetensors_file::parse_metadata(const nlohmann::json& entry) {
  // The reference implementation reads a null "__metadata__" as absent.
  if (entry.is_null()) return;
  if (!entry.is_object()) fail("\"__metadata__\" is " + std::string(entry.type_name()) + ", not an object");
  for (const auto& [key, value] : entry.items()) {
    if (!value.is_string()) {
      fail("\"__metadata__\" value for key " + detail::quote_for_message(key) + " is " +
           detail::header_value_text(value) + ", not a string");
    }
    metadata_.emplace(key, value.get<std::string>());
  }
}

CPUTRAIN_DECL safetensors_file::placed_tensor safetensors_file::parse_entry(const std::string& name,
                                                                            const nlohmann::json& entry,
                                                                            std::uint64_t data_size) const {
  if (!entry.is_object()) {
    fail_tensor(name, "entry is " + detail::header_value_text(entry) + ", not an object");
  }
  tensor_info t;
  t.name = name;

  const auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end()) fail_tensor(name, "missing \"dtype\"");
  if (!dtype_it->is_string()) {
    fail_tensor(name, "\"dtype\" is " + detail::header_value_text(*dtype_it) + ", not a string");
  }
  const auto& dtype_name = dtype_it->get_ref<const std::string&>();
  const auto parsed_dtype = dtype_from_string(dtype_name);
  if (!parsed_dtype) {
    if (is_safetensors_dtype_name(dtype_name)) {
      fail("unsupported dtype " + dtype_name + " for tensor " + detail::quote_for_message(name) +
           " (cputrain reads F32, BF16, F16 and I64)");
    }
    fail_tensor(name, "unknown dtype " + detail::quote_for_message(dtype_name));
  }
  t.dtype = *parsed_dtype;

  const auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) fail_tensor(name, "missing \"shape\"");
  if (!shape_it->is_array()) {
    fail_tensor(name, "\"shape\" is " + detail::header_value_text(*shape_it) + ", not an array");
  }
  for (const auto& dim : *shape_it) {
    const auto d = unsigned_integer(dim);
    if (!d || *d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail_tensor(name, "\"shape\" " + detail::header_value_text(*shape_it) + " has the dimension " +
                            detail::header_value_text(dim) + ", not a non-negative integer");
    }
    t.shape.push_back(static_cast<std::int64_t>(*d));
  }
  const std::size_t element_size = dtype_size(t.dtype);
  const auto numel = detail::checked_tensor_numel(t.shape, element_size);
  if (!numel) {
    fail_tensor(name, "shape " + detail::shape_text(t.shape) + " x " + dtype_name + " overflows a 64-bit byte count");
  }
  t.numel = static_cast<std::int64_t>(*numel);
  const std::uint64_t needed = *numel * element_size;

  const auto offsets_it = entry.find("data_offsets");
  if (offsets_it == entry.end()) fail_tensor(name, "missing \"data_offsets\"");
  const auto begin =
      offsets_it->is_array() && offsets_it->size() == 2 ? unsigned_integer((*offsets_it)[0]) : std::nullopt;
  const auto end =
      offsets_it->is_array() && offsets_it->size() == 2 ? unsigned_integer((*offsets_it)[1]) : std::nullopt;
  if (!begin || !end) {
    fail_tensor(name, "\"data_offsets\" is " + detail::header_value_text(*offsets_it) +
                          ", not two non-negative integers [begin, end]");
  }
  const std::string offsets_text = "data_offsets [" + std::to_string(*begin) + ", " + std::to_string(*end) + "]";
  if (*begin > *end) fail_tensor(name, offsets_text + " begin after they end");
  if (*end > data_size) {
    // The usual cause is a file cut short (a copy or download that stopped): say so.
    fail_tensor(name, offsets_text + " run past the end of the data region (" + std::to_string(data_size) +
                          " bytes): the file is truncated");
  }
  if (*end - *begin != needed) {
    fail_tensor(name, offsets_text + " hold " + std::to_string(*end - *begin) + " bytes but shape " +
                          detail::shape_text(t.shape) + " x " + dtype_name + " needs " + std::to_string(needed));
  }
  return {std::move(t), *begin, *end};
}

CPUTRAIN_DECL void safetensors_file::check_tiling(std::vector<placed_tensor>& placed, std::uint64_t data_size) const {
  std::sort(placed.begin(), placed.end(), [](const placed_tensor& a, const placed_tensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const std::string* previous = nullptr;
  for (const auto& p : placed) {
    if (p.begin < covered) {
      fail_tensor(p.info.name, "data_offsets [" + std::to_string(p.begin) + ", " + std::to_string(p.end) +
                                   "] overlap tensor " + detail::quote_for_message(*previous) + ", which ends at " +
                                   std::to_string(covered));
    }
    if (p.begin > covered) {
      fail("bytes [" + std::to_string(covered) + ", " + std::to_string(p.begin) +
           ") of the data region belong to no tensor (a hole before tensor " +
           detail::quote_for_message(p.info.name) + ")");
    }
    covered = p.end;
    previous = &p.info.name;
  }
  if (covered != data_size) {
    fail("the data region has " + std::to_string(data_size) + " bytes but the tensors cover only " +
         std::to_string(covered) + " (trailing bytes after the last tensor)");
  }
}

CPUTRAIN_DECL void check_tensors(const safetensors_file& file, std::span<const expected_tensor> expected) {
  std::vector<std::string> missing, wrong_shape, unexpected;
  std::vector<std::string_view> wanted;
  wanted.reserve(expected.size());
  for (const expected_tensor& e : expected) {
    wanted.push_back(e.name);
    if (!file.contains(e.name)) {
      missing.push_back(detail::quote_for_message(e.name));
      continue;
    }
    const tensor_info& t = file.info(e.name);
    if (t.shape != e.shape) {
      wrong_shape.push_back(detail::quote_for_message(e.name) + ": expected " + detail::shape_text(e.shape) +
                            ", found " + detail::shape_text(t.shape));
    }
  }
  std::sort(wanted.begin(), wanted.end());
  for (const std::string& name : file.names()) {
    if (!std::binary_search(wanted.begin(), wanted.end(), std::string_view(name))) {
      unexpected.push_back(detail::quote_for_message(name) + " " + detail::shape_text(file.info(name).shape));
    }
  }
  if (missing.empty() && wrong_shape.empty() && unexpected.empty()) return;

  std::string message = file.path().string() + ": the tensors are not the expected ones (" +
                        std::to_string(missing.size()) + " missing, " + std::to_string(wrong_shape.size()) +
                        " with the wrong shape, " + std::to_string(unexpected.size()) + " unexpected)";
  for (const auto& m : missing) message += "\n  missing: " + m;
  for (const auto& w : wrong_shape) message += "\n  wrong shape: " + w;
  constexpr std::size_t max_unexpected_listed = 20;
  for (std::size_t i = 0; i < unexpected.size() && i < max_unexpected_listed; ++i) {
    message += "\n  unexpected: " + unexpected[i];
  }
  if (unexpected.size() > max_unexpected_listed) {
    message += "\n  ... and " + std::to_string(unexpected.size() - max_unexpected_listed) + " more unexpected";
  }
  throw io_error(message);
}

CPUTRAIN_DECL void safetensors_writer::add(std::string name, dtype type, std::vector<std::int64_t> shape,
                                           std::span<const std::byte> data) {
  check(name, type, shape, data.size());
  entries_.push_back({std::move(name), type, std::move(shape), std::vector<std::byte>(data.begin(), data.end()), {}});
}

CPUTRAIN_DECL void safetensors_writer::add_borrowed(std::string name, dtype type, std::vector<std::int64_t> shape,
                                                    std::span<const std::byte> data) {
  check(name, type, shape, data.size());
  entries_.push_back({std::move(name), type, std::move(shape), {}, data});
}

CPUTRAIN_DECL void safetensors_writer::add_bf16(std::string name, std::vector<std::int64_t> shape,
                                                std::span<const float> values) {
  std::vector<bf16> rounded(values.size());
  to_bf16(values, rounded);
  add_bf16(std::move(name), std::move(shape), std::span<const bf16>(rounded));
}

CPUTRAIN_DECL void safetensors_writer::set_metadata(std::string key, std::string value) {
  check_utf8("set_metadata: key", key);
  if (key == checksum_marker_key || key.starts_with(checksum_key_prefix))
    throw usage_error("safetensors_writer::set_metadata: the key " + detail::quote_for_message(key) +
                      " is reserved for the checksums the writer adds itself");
  check_utf8("set_metadata: value of " + detail::quote_for_message(key), value);
  metadata_[std::move(key)] = std::move(value);
}

CPUTRAIN_DECL std::vector<std::byte> safetensors_writer::serialize() const {
  std::vector<std::byte> out;
  emit([&out](std::span<const std::byte> bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); });
  return out;
}

CPUTRAIN_DECL void safetensors_writer::write(const std::filesystem::path& path) const {
  write_file_atomically(
      path, [this](atomic_file_sink& out) { emit([&out](std::span<const std::byte> bytes) { out.write(bytes); }); });
}

CPUTRAIN_DECL void safetensors_writer::check_utf8(const std::string& what, const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
  } catch (const nlohmann::json::exception&) {
    throw usage_error("safetensors_writer::" + what + " is not valid UTF-8: " + detail::quote_for_message(s));
  }
}

CPUTRAIN_DECL void safetensors_writer::check(const std::string& name, dtype type,
                                             const std::vector<std::int64_t>& shape, std::size_t data_size) const {
  const std::string where = "safetensors_writer::add: ";
  if (name.empty()) throw usage_error(where + "a tensor name must not be empty");
  if (name == "__metadata__") throw usage_error(where + "\"__metadata__\" is reserved, not a tensor name");
  check_utf8("add: tensor name", name);
  for (const auto& e : entries_) {
    if (e.name == name) throw usage_error(where + "tensor " + detail::quote_for_message(name) + " was already added");
  }
  for (const std::int64_t d : shape) {
    if (d < 0) {
      throw usage_error(where + "tensor " + detail::quote_for_message(name) + ": shape " + detail::shape_text(shape) +
                        " has a negative dimension");
    }
  }
  const auto numel = detail::checked_tensor_numel(shape, dtype_size(type));
  if (!numel) {
    throw usage_error(where + "tensor " + detail::quote_for_message(name) + ": shape " + detail::shape_text(shape) +
                      " overflows a 64-bit byte count");
  }
  const std::uint64_t needed = *numel * dtype_size(type);
  if (needed != data_size) {
    throw usage_error(where + "tensor " + detail::quote_for_message(name) + ": shape " + detail::shape_text(shape) +
                      " x " + std::string(to_string(type)) + " needs " + std::to_string(needed) + " bytes but " +
                      std::to_string(data_size) + " were given");
  }
}

CPUTRAIN_DECL std::map<std::string, std::string> safetensors_writer::metadata_with_checksums() const {
  std::map<std::string, std::string> out = metadata_;
  if (entries_.empty()) return out;
  out.emplace(checksum_marker_key, checksum_marker_value);
  for (const auto& e : entries_) out.emplace(checksum_key(e.name), checksum_hex(tensor_checksum(e.bytes())));
  return out;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::io
