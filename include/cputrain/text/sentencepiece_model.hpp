// cputrain::text::read_sentencepiece_model — the parts of a SentencePiece model file (a ModelProto in protobuf's
// wire format, as XLM-RoBERTa's sentencepiece.bpe.model is) that a tokenizer is built from: the pieces with their
// scores and types, the trainer's model type, unk id and byte fallback, and the normalizer's precompiled charsmap.
// Read field by field from the wire format: a dozen fields do not justify generated code and a protobuf dependency;
// unknown fields are skipped, as protobuf readers do, and a damaged file is refused naming its byte.
#pragma once

#include "cputrain/text/text_error.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::text {

struct sentencepiece_piece {
  std::string piece;
  float score = 0.0f;
  int type = 1;  // 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte
};

struct sentencepiece_model {
  std::vector<sentencepiece_piece> pieces;
  int model_type = 1;  // 1 Unigram, 2 BPE, 3 word, 4 char
  int unk_id = 0;
  bool byte_fallback = false;
  std::string precompiled_charsmap;
  std::string normalizer_name;
};

namespace detail {

// One message of the wire format: fields in order, each with its number, wire type and value.
class proto_reader {
 public:
  proto_reader(std::string_view bytes, std::size_t base, const std::string& source)
      : bytes_(bytes), base_(base), source_(source) {}

  struct field {
    std::uint32_t number;
    int wire_type;
    std::uint64_t number_value;  // varint, 32- and 64-bit fields
    std::string_view bytes;      // length-delimited fields
    std::size_t at;              // its offset in the file, for messages
  };

  bool next(field& f) {
    if (pos_ >= bytes_.size()) return false;
    f.at = base_ + pos_;
    const std::uint64_t tag = varint();
    f.number = static_cast<std::uint32_t>(tag >> 3);
    f.wire_type = static_cast<int>(tag & 7);
    if (f.number == 0) fail(f.at, "field number 0");
    switch (f.wire_type) {
      case 0: f.number_value = varint(); break;
      case 1: f.number_value = fixed(8); break;
      case 5: f.number_value = fixed(4); break;
      case 2: {
        const std::uint64_t n = varint();
        if (n > bytes_.size() - pos_) fail(f.at, "a field longer than the rest of its message");
        f.bytes = bytes_.substr(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        break;
      }
      default: fail(f.at, "wire type " + std::to_string(f.wire_type) + ", which protobuf no longer writes");
    }
    return true;
  }
  [[noreturn]] void fail(std::size_t at, const std::string& problem) const {
    throw text_error(source_ + ": not a SentencePiece model: " + problem + " at byte " + std::to_string(at));
  }

 private:
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) fail(base_ + pos_, "a number cut short");
      const auto b = static_cast<unsigned char>(bytes_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail(base_ + pos_, "a number longer than 10 bytes");
  }
  std::uint64_t fixed(std::size_t n) {
    if (n > bytes_.size() - pos_) fail(base_ + pos_, "a fixed-size field cut short");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += n;
    return v;
  }

  std::string_view bytes_;
  std::size_t base_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

inline sentencepiece_piece read_piece(proto_reader r) {
  sentencepiece_piece p;
  proto_reader::field f{};
  while (r.next(f)) {
    if (f.number == 1 && f.wire_type == 2) p.piece.assign(f.bytes);
    if (f.number == 2 && f.wire_type == 5) {
      const auto bits = static_cast<std::uint32_t>(f.number_value);
      std::memcpy(&p.score, &bits, sizeof p.score);
    }
    if (f.number == 3 && f.wire_type == 0) p.type = static_cast<int>(f.number_value);
  }
  return p;
}

}  // namespace detail

/// The model of a SentencePiece .model file. Throws text_error naming the file for a damaged one.
CPUTRAIN_DECL sentencepiece_model read_sentencepiece_model(const std::filesystem::path& file);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL sentencepiece_model read_sentencepiece_model(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw text_error(file.string() + ": cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string source = file.string();
  sentencepiece_model m;
  detail::proto_reader model(bytes, 0, source);
  detail::proto_reader::field f{};
  while (model.next(f)) {
    if (f.wire_type != 2) continue;
    detail::proto_reader inner(f.bytes, static_cast<std::size_t>(f.bytes.data() - bytes.data()), source);
    if (f.number == 1) {
      m.pieces.push_back(detail::read_piece(inner));
      if (m.pieces.size() >= (1u << 24)) model.fail(f.at, "2^24 pieces or more");
    } else if (f.number == 2) {  // TrainerSpec
      for (detail::proto_reader::field t{}; inner.next(t);) {
        if (t.wire_type != 0) continue;
        if (t.number == 3) m.model_type = static_cast<int>(t.number_value);
        if (t.number == 35) m.byte_fallback = t.number_value != 0;
        if (t.number == 40) m.unk_id = static_cast<int>(t.number_value);
      }
    } else if (f.number == 3) {  // NormalizerSpec
      for (detail::proto_reader::field n{}; inner.next(n);) {
        if (n.wire_type != 2) continue;
        if (n.number == 1) m.normalizer_name.assign(n.bytes);
        if (n.number == 2) m.precompiled_charsmap.assign(n.bytes);
      }
    }
  }
  if (m.pieces.empty()) throw text_error(source + ": not a SentencePiece model: it has no pieces");
  return m;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
