// Text from outside (a JSON value, an id, a tensor name) shown in an error message: as JSON, so quotes and control
// characters cannot make the message ambiguous; invalid UTF-8 replaced rather than thrown on (this is for messages
// only); and cut short at a character boundary, so a hostile file cannot produce an enormous message or split a
// UTF-8 character. One implementation for every reader. Templates on the JSON type (nlohmann::json or
// ordered_json), so that this header, and core, do not include nlohmann/json for those who never show one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cputrain {

/// The first `max_bytes` of valid UTF-8 text `s`, cut back to a character boundary.
[[nodiscard]] inline std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) noexcept {
  if (s.size() <= max_bytes) return s;
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
  return s.substr(0, n);
}

/// `value` as compact JSON; when longer than `max_bytes`, its first bytes up to a character boundary and "...".
template <class Json>
[[nodiscard]] std::string json_text_for_message(const Json& value, std::size_t max_bytes = 80) {
  const std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() <= max_bytes) return text;
  return std::string(utf8_prefix(text, max_bytes - 3)) + "...";
}

/// `s` as a JSON string literal (quote_for_message<nlohmann::json>(s)). With `max_bytes`, only the characters
/// within the first max_bytes bytes of `s` are quoted, and "..." follows when some were left out.
template <class Json>
[[nodiscard]] std::string quote_for_message(std::string_view s, std::size_t max_bytes = std::string_view::npos) {
  const std::string_view shown = utf8_prefix(s, max_bytes);
  std::string out = Json(std::string(shown)).dump(-1, ' ', false, Json::error_handler_t::replace);
  if (shown.size() < s.size()) out += "...";
  return out;
}

}  // namespace cputrain
