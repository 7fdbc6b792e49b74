// cputrain-bench-text: how fast SQuAD text is read, tokenized and turned into QA features, against the target
// "at least 5 MB of SQuAD text per second per core, and memory proportional to the features, not to copies of
// contexts".
//   cputrain-bench-text --vocab PATH [--megabytes N] [--threads N] [--file PATH] [--keep PATH] [--repeats R]
// Without --file it generates a SQuAD-shaped file of about N MB (10^6 bytes) in the official nested v1.1 format
// (deterministic, fixed seed): articles, paragraphs of 100-250 words of English-like text with ~2 % non-ASCII words,
// 5 questions each whose answers are real substrings at the right answer_start (in code points). Non-ASCII text
// is written as \uXXXX escapes, as Python's json.dump writes the official files.
// Every phase runs on the same bytes in memory, --repeats times, and the best time is kept:
//   parse       parse_squad on the file's bytes
//   tokenize    bert_tokenizer::encode over every context once and every question, one thread
//   features    make_qa_features with labels (training), at 1 thread and at --threads threads, and without
//               (evaluation) at 1 thread
// MB/s are file megabytes per second unless the name says "text"; at 1 thread they are per core. Memory: each
// phase's peak RSS above what was resident before it (Linux clear_refs), qa_features::memory_bytes(), and the
// process's peak RSS (getrusage) at the end. Prints a table and, as its last line, one JSON object with every figure.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>

#include "cputrain/core/error.hpp"
#include "cputrain/data/qa_features.hpp"
#include "cputrain/data/squad_reader.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"

namespace po = boost::program_options;
namespace ct = cputrain;

namespace {

constexpr double target_mb_s_per_core = 5.0;

// ------------------------------------------------------------------------------------------------------------
// The generated file.

// Common English words, lower case; sentences start capitalised.
constexpr std::string_view common_text =
    "the of and to in a is was for on as with by that at from his it an were are which this also be has or had "
    "first one their its new after who they two her she been other when there all during into school time may "
    "years more most only over city some world would where later up such used many can state about national out "
    "known university united then made between both under century called including team began since government "
    "three part while being however these several became people same early because each well through war "
    "against high number area until north south east west river church music film series season group public "
    "second before large title system population main held while him them history album played university "
    "american english french british german roman empire king queen law court power building water land "
    "company market trade city's country's nation's region's family life death born died moved built "
    "named found formed based located returned released produced published recorded written designed "
    "developed established opened closed received won lost led took gave made saw came went began "
    "ended continued remained served worked studied taught wrote said described considered believed "
    "claimed reported noted suggested argued introduced included increased reduced changed allowed "
    "required provided produced supported opposed controlled owned ruled defeated captured destroyed "
    "important major significant traditional modern ancient early late former current original final "
    "popular famous common similar different various several certain particular general local central "
    "western eastern northern southern small large great little long short old young new best "
    "greatest largest smallest highest lowest longest oldest official military political economic "
    "social cultural religious scientific technical natural human public private royal imperial "
    "period age era decade year month day week time history tradition culture society economy "
    "industry education research science technology art literature language religion philosophy "
    "theory method process practice form type kind style structure design model version edition "
    "record song book novel poem play opera symphony painting sculpture temple palace castle "
    "cathedral bridge tower station airport harbour port island mountain valley lake sea ocean coast "
    "border province district county village town capital center centre street road railway line "
    "army navy force battle siege treaty alliance republic kingdom dynasty emperor president minister "
    "member leader director student teacher professor scholar writer author artist composer singer "
    "player coach officer soldier farmer worker merchant priest bishop pope saint god gods spirit "
    "energy light heat sound signal data information network computer software device machine engine "
    "vehicle ship aircraft train car species plant animal bird fish tree forest soil rock mineral "
    "gold silver iron copper oil gas coal salt food wine beer bread rice wheat cotton silk trade "
    "million billion thousand hundred percent half quarter majority minority average total rate level "
    "amount degree size range distance weight height depth temperature pressure speed growth change "
    "not no very much many few all any other another such only even still also often usually "
    "generally especially particularly mainly largely nearly almost about around approximately";

// The most frequent English words, drawn for about a third of the running text.
constexpr std::string_view function_text =
    "the the the of of and and to in in a a is was for on as with by that at from his it an were are which "
    "this be has or had their its who they her she been when there into";

// Capitalised names: places and people that carry no accent.
constexpr std::string_view proper_text =
    "London Paris Berlin Rome Vienna Madrid Lisbon Boston Chicago Toronto Sydney Cairo Delhi Tokyo Beijing "
    "Europe Asia Africa America Australia England France Germany Italy Spain Portugal Russia China Japan India "
    "Egypt Greece Mexico Canada Brazil Thames Rhine Danube Nile Amazon Alps Andes Himalaya Victoria Albert "
    "Elizabeth Napoleon Newton Darwin Einstein Beethoven Mozart Chopin Shakespeare Dickens Tolstoy Luther "
    "Calvin Augustine Aristotle Plato Caesar Augustus Charlemagne Lincoln Washington Jefferson Roosevelt "
    "Churchill Kennedy Edison Tesla Marconi Faraday Maxwell Harvard Yale Oxford Cambridge Princeton Stanford "
    "Microsoft Apple Google Intel Boeing Siemens Philips Nokia Sony Toyota";

// About 2 % of the words: accented Latin, Greek, Cyrillic, CJK (one outside the BMP) and an em dash.
constexpr std::string_view non_ascii_text =
    "Dvořák|São Paulo|Zürich|Genève|Kraków|Łódź|Müller|Brontë|Gödel|Ångström|café|naïve|résumé|Besançon|Córdoba|"
    "Schrödinger|Erdős|Straße|Ελλάδα|Москва|東京|北京大学|𠮷野|Malmö|Curaçao|Bogotá|Reykjavík|Nuñez|—";

constexpr std::string_view question_starts_text =
    "What|Who|When|Where|Which|How many|Why|In what year|What is the name of|How|What type of|Who was the";

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// Appends `s` (valid UTF-8) to `out` as the inside of a JSON string, non-ASCII as \uXXXX escapes (surrogate
/// pairs above U+FFFF), as Python's json.dump writes by default.
void append_json_escaped(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  const auto escape16 = [&](std::uint32_t unit) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex[(unit >> shift) & 0xF];
  };
  std::size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    const std::size_t n = ct::text::decode_utf8(s, pos, cp);
    if (n == 0) throw std::logic_error("generator produced invalid UTF-8");
    pos += n;
    if (cp == '"') {
      out += "\\\"";
    } else if (cp == '\\') {
      out += "\\\\";
    } else if (cp < 0x20) {
      escape16(cp);
    } else if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      escape16(cp);
    } else {
      const std::uint32_t v = cp - 0x10000;
      escape16(0xD800 + (v >> 10));
      escape16(0xDC00 + (v & 0x3FF));
    }
  }
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  append_json_escaped(out, s);
  out += '"';
}

/// Deterministic SQuAD-shaped text.
class squad_generator {
 public:
  explicit squad_generator(std::uint64_t seed)
      : rng_(seed),
        function_(split(function_text, ' ')),
        common_(split(common_text, ' ')),
        proper_(split(proper_text, ' ')),
        non_ascii_(split(non_ascii_text, '|')),
        question_starts_(split(question_starts_text, '|')) {}

  /// A file in the official nested format of at least `target_bytes` (it stops after the paragraph that
  /// reaches it).
  std::string file(std::size_t target_bytes) {
    std::string out;
    out.reserve(target_bytes + (1 << 16));
    out += "{\"data\": [";
    std::uint32_t question_number = 0;
    for (std::size_t article = 0; out.size() < target_bytes; ++article) {
      if (article > 0) out += ", ";
      out += "{\"title\": ";
      append_json_string(out, title());
      out += ", \"paragraphs\": [";
      const std::size_t paragraphs = uniform(20, 60);
      for (std::size_t p = 0; p < paragraphs && out.size() < target_bytes; ++p) {
        if (p > 0) out += ", ";
        paragraph(out, question_number);
      }
      out += "]}";
    }
    out += "], \"version\": \"1.1\"}\n";
    return out;
  }

 private:
  // A word of a context: its bytes, the sentence it is in, and the parenthesis or quotation it is inside (0 if
  // none), so that an answer never straddles an opening bracket.
  struct word_span {
    std::size_t begin = 0, end = 0;
    std::size_t sentence = 0, group = 0;
  };

  std::size_t uniform(std::size_t lo, std::size_t hi) {  // inclusive
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  std::string_view pick(const std::vector<std::string_view>& from) { return from[uniform(0, from.size() - 1)]; }

  static std::string capitalised(std::string_view word) {
    std::string w(word);
    if (!w.empty() && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 'a' + 'A');
    return w;
  }

  std::string number() {
    switch (uniform(0, 5)) {
      case 0: {  // 1,234 or 12,345,678
        std::size_t value = uniform(1000, 9'999'999);
        std::string digits = std::to_string(value), grouped;
        for (std::size_t i = 0; i < digits.size(); ++i) {
          if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
          grouped += digits[i];
        }
        return grouped;
      }
      case 1: {  // 19th, 1st, 22nd
        const std::size_t n = uniform(1, 30);
        const char* suffix = (n % 10 == 1 && n != 11) ? "st" : (n % 10 == 2 && n != 12) ? "nd"
                             : (n % 10 == 3 && n != 13)                                 ? "rd"
                                                                                        : "th";
        return std::to_string(n) + suffix;
      }
      case 2: return std::to_string(uniform(1500, 2020));  // a year
      case 3: return std::to_string(uniform(2, 99)) + "%";
      case 4: return std::to_string(uniform(1, 99)) + "." + std::to_string(uniform(0, 9));
      default: return std::to_string(uniform(2, 500));
    }
  }

  std::string title() {
    std::string t;
    const std::size_t words = uniform(1, 3);
    for (std::size_t i = 0; i < words; ++i) {
      if (i > 0) t += '_';
      t += chance(0.5) ? std::string(pick(proper_)) : capitalised(pick(common_));
    }
    return t;
  }

  // One word of running text (no spaces around it), `start` when it begins a sentence.
  std::string word(bool start) {
    const double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
    if (r < 0.02) return std::string(pick(non_ascii_));
    if (r < 0.05) return number();
    if (r < 0.10) {
      std::string name(pick(proper_));
      if (chance(0.1)) name += "'s";
      return name;
    }
    // English text is about a third function words; they keep words, and contexts, at SQuAD's length.
    const auto& list = r < 0.40 ? function_ : common_;
    std::string w = start ? capitalised(pick(list)) : std::string(pick(list));
    if (chance(0.01)) {
      w += '-';
      w += pick(common_);
    }
    return w;
  }

  std::string context(std::vector<word_span>& spans) {
    std::string text;
    spans.clear();
    const std::size_t total = uniform(100, 250);
    std::size_t words = 0, sentence = 0, group = 0;
    while (words < total) {
      const std::size_t length = std::min(uniform(8, 24), total - words);
      if (!text.empty()) text += ' ';
      std::size_t open_group = 0, group_left = 0;
      char close = 0;
      for (std::size_t i = 0; i < length; ++i, ++words) {
        if (i > 0) text += ' ';
        if (group_left == 0 && i > 0 && i + 4 < length) {
          if (chance(0.02)) {
            text += '(';
            close = ')';
            group_left = uniform(2, 4);
            open_group = ++group;
          } else if (chance(0.02)) {
            text += '"';
            close = '"';
            group_left = uniform(1, 3);
            open_group = ++group;
          }
        }
        const std::string w = word(i == 0);
        const std::size_t begin = text.size();
        text += w;
        if (w != "—") spans.push_back({begin, text.size(), sentence, group_left > 0 ? open_group : 0});
        if (group_left > 0 && --group_left == 0) text += close;
        if (i + 1 < length && group_left == 0 && chance(0.08)) text += ',';
      }
      text += '.';
      ++sentence;
    }
    return text;
  }

  std::string question(const std::string& context_text, const std::vector<word_span>& spans, std::size_t near) {
    std::string q(pick(question_starts_));
    std::size_t words = static_cast<std::size_t>(std::count(q.begin(), q.end(), ' ')) + 1;
    const std::size_t total = uniform(8, 15);
    // A few words of the answer's sentence, as SQuAD's crowd workers paraphrase around the answer.
    const std::size_t borrowed = std::min<std::size_t>(uniform(2, 4), total > words ? total - words : 0);
    const std::size_t filler = total > words + borrowed ? total - words - borrowed : 0;
    for (std::size_t i = 0; i < filler; ++i, ++words) {
      q += ' ';
      q += word(false);
    }
    for (std::size_t i = 0; i < borrowed; ++i) {
      const std::size_t k = std::min(spans.size() - 1, near + 1 + i);
      q += ' ';
      q.append(context_text, spans[k].begin, spans[k].end - spans[k].begin);
    }
    q += '?';
    return q;
  }

  void paragraph(std::string& out, std::uint32_t& question_number) {
    std::vector<word_span> spans;
    const std::string text = context(spans);
    out += "{\"context\": ";
    append_json_string(out, text);
    out += ", \"qas\": [";
    for (int k = 0; k < 5; ++k) {
      // The answer: 1-4 words of one sentence, not crossing into or out of brackets or quotes.
      std::size_t first = uniform(0, spans.size() - 1), last = first;
      const std::size_t want = uniform(0, 3);
      while (last - first < want && last + 1 < spans.size() && spans[last + 1].sentence == spans[first].sentence &&
             spans[last + 1].group == spans[first].group)
        ++last;
      const std::string_view answer(text.data() + spans[first].begin, spans[last].end - spans[first].begin);
      const std::size_t answer_start = ct::text::count_code_points(std::string_view(text).substr(0, spans[first].begin));
      if (k > 0) out += ", ";
      out += "{\"answers\": [{\"answer_start\": " + std::to_string(answer_start) + ", \"text\": ";
      append_json_string(out, answer);
      out += "}], \"question\": ";
      append_json_string(out, question(text, spans, first));
      // 24 hex digits like SQuAD's ids; the first 8 are a bijection of the question's number, so ids are unique.
      char id[32];
      std::snprintf(id, sizeof id, "%08x%016llx", static_cast<unsigned>(question_number * 2654435761u),
                    static_cast<unsigned long long>(rng_()));
      ++question_number;
      out += ", \"id\": \"";
      out += id;
      out += "\"}";
    }
    out += "]}";
  }

  std::mt19937_64 rng_;
  std::vector<std::string_view> function_, common_, proper_, non_ascii_, question_starts_;
};

// ------------------------------------------------------------------------------------------------------------
// Measuring.

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

/// A /proc/self/status figure in KiB ("VmRSS", "VmHWM").
std::optional<std::size_t> status_kib(std::string_view key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':')
      return static_cast<std::size_t>(std::stoull(line.substr(key.size() + 1)));
  }
  return std::nullopt;
}

/// The peak resident memory of one phase above what was resident when it began: freed memory is handed back to
/// the system, the high-water mark reset (Linux >= 4.0: "5" to /proc/self/clear_refs), then read after.
class phase_memory {
 public:
  void begin() {
    malloc_trim(0);
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.close();
    ok_ = static_cast<bool>(clear);
    base_ = status_kib("VmRSS");
  }
  /// MiB above the start, or nullopt where the high-water mark cannot be reset.
  std::optional<double> end() const {
    const auto peak = status_kib("VmHWM");
    if (!ok_ || !base_ || !peak) return std::nullopt;
    return static_cast<double>(*peak > *base_ ? *peak - *base_ : 0) / 1024.0;
  }

 private:
  bool ok_ = false;
  std::optional<std::size_t> base_;
};

template <class T>
struct timed {
  double seconds = 0;  // best of the repetitions
  std::optional<double> peak_extra_mib;
  T result;
};

/// Runs `make` `repeats` times, the previous result freed before each run, and keeps the best time and the last
/// result.
template <class F>
auto best_of(int repeats, F&& make) {
  using result_type = decltype(make());
  std::optional<result_type> kept;
  double best = std::numeric_limits<double>::infinity();
  phase_memory memory;
  memory.begin();
  for (int r = 0; r < repeats; ++r) {
    kept.reset();
    const auto start = clock_type::now();
    kept.emplace(make());
    best = std::min(best, seconds_since(start));
  }
  const auto extra = memory.end();
  return timed<result_type>{best, extra, std::move(*kept)};
}

struct settings {
  std::string vocab, file, keep;
  double megabytes = 30;
  int threads = 0;
  int repeats = 3;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ct::usage_error("--file " + path + ": cannot open it");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ct::usage_error("--file " + path + ": cannot read it");
  return bytes;
}

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
std::string optional_text(const std::optional<double>& v) { return v ? fixed(*v, 1) : std::string("n/a"); }

int run(const settings& s, const ct::text::bert_tokenizer& tokenizer) {
  // The bytes: a real file or a generated one.
  std::string bytes;
  std::string source;
  double generate_s = 0;
  if (!s.file.empty()) {
    bytes = read_file(s.file);
    source = s.file;
  } else {
    const auto start = clock_type::now();
    bytes = squad_generator(20261129).file(static_cast<std::size_t>(s.megabytes * 1e6));
    generate_s = seconds_since(start);
    source = "generated";
    if (!s.keep.empty()) {
      std::ofstream out(s.keep, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) throw ct::usage_error("--keep " + s.keep + ": cannot write it");
    }
  }
  const double file_mb = static_cast<double>(bytes.size()) / 1e6;
  std::fprintf(stderr, "%s: %.2f MB%s\n", source.c_str(), file_mb,
               generate_s > 0 ? (" (generated in " + fixed(generate_s, 2) + " s)").c_str() : "");

  // (a) parse
  const std::string name = s.file.empty() ? std::string("generated") : s.file;
  auto parsed = best_of(s.repeats, [&] { return ct::data::parse_squad(bytes, name); });
  const ct::data::squad_dataset& dataset = parsed.result;
  std::size_t context_bytes = 0, question_bytes = 0, copied_context_bytes = 0;
  for (const auto& c : dataset.contexts) context_bytes += c.size();
  for (const auto& e : dataset.examples) {
    question_bytes += e.question.size();
    copied_context_bytes += dataset.context(e).size();
  }
  std::fprintf(stderr, "parse: %.3f s\n", parsed.seconds);
  const std::size_t file_bytes = bytes.size();
  std::string().swap(bytes);  // a training run drops the file once parsed; so does this one, for its peak RSS

  // (b) tokenize every context once and every question, one thread
  auto tokenized = best_of(s.repeats, [&] {
    ct::text::token_sequence tokens;
    std::pair<std::size_t, std::size_t> count{0, 0};  // context tokens, question tokens
    for (const auto& c : dataset.contexts) {
      tokens.clear();
      tokenizer.encode(c, tokens);
      count.first += tokens.size();
    }
    for (const auto& e : dataset.examples) {
      tokens.clear();
      tokenizer.encode(e.question, tokens);
      count.second += tokens.size();
    }
    return count;
  });
  const std::size_t context_tokens = tokenized.result.first, question_tokens = tokenized.result.second;
  const std::size_t all_tokens = context_tokens + question_tokens;
  std::fprintf(stderr, "tokenize: %.3f s\n", tokenized.seconds);

  // (c) training features, 1 thread and s.threads; (d) evaluation features, 1 thread
  const ct::data::qa_feature_options train_options{.max_seq_length = 384, .doc_stride = 128, .labels = true};
  const ct::data::qa_feature_options eval_options{.max_seq_length = 384, .doc_stride = 128, .labels = false};
  const auto features_at = [&](int threads, const ct::data::qa_feature_options& options) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    return best_of(s.repeats, [&] { return ct::data::make_qa_features(dataset, tokenizer, options); });
  };
  auto train_1t = features_at(1, train_options);
  std::fprintf(stderr, "features (train), 1 thread: %.3f s\n", train_1t.seconds);
  auto train_nt = features_at(s.threads, train_options);
  std::fprintf(stderr, "features (train), %d threads: %.3f s\n", s.threads, train_nt.seconds);
  // The threaded run must give the very same features (ids and labels), as make_qa_features promises.
  bool same = train_nt.result.size() == train_1t.result.size();
  for (std::size_t i = 0; same && i < train_1t.result.size(); ++i) {
    const auto a = train_1t.result.input_ids(i), b = train_nt.result.input_ids(i);
    same = std::equal(a.begin(), a.end(), b.begin(), b.end()) &&
           train_1t.result[i].start_position == train_nt.result[i].start_position &&
           train_1t.result[i].end_position == train_nt.result[i].end_position;
  }
  // What is reported of the training features; they are freed before the evaluation features are made, as a
  // program makes one or the other.
  struct feature_summary {
    std::size_t count = 0, bytes = 0, skipped = 0, max_seq = 0, tokens = 0, context_tokens = 0;
    explicit feature_summary(const ct::data::qa_features& f)
        : count(f.size()), bytes(f.memory_bytes()), skipped(f.report().skipped), max_seq(f.max_seq_length()) {
      for (const auto& feature : f.all()) {
        tokens += feature.length;
        context_tokens += feature.context_tokens;
      }
    }
  };
  const feature_summary train(train_1t.result);
  train_1t.result = {};
  train_nt.result = {};
  auto eval_1t = features_at(1, eval_options);
  std::fprintf(stderr, "features (eval), 1 thread: %.3f s\n", eval_1t.seconds);
  const feature_summary eval(eval_1t.result);
  eval_1t.result = {};

  const double text_mb = static_cast<double>(context_bytes + question_bytes) / 1e6;
  const double pipeline_s = parsed.seconds + train_1t.seconds;
  const double n_features = static_cast<double>(train.count);
  const double max_seq = static_cast<double>(train.max_seq);

  nlohmann::json out;
  out["source"] = source;
  out["file_bytes"] = file_bytes;
  out["file_mb"] = file_mb;
  out["contexts"] = dataset.contexts.size();
  out["questions"] = dataset.examples.size();
  out["context_bytes"] = context_bytes;
  out["context_bytes_if_copied"] = copied_context_bytes;
  out["question_bytes"] = question_bytes;
  out["threads"] = s.threads;
  out["repeats"] = s.repeats;
  out["parse_s"] = parsed.seconds;
  out["parse_mb_s"] = file_mb / parsed.seconds;
  out["parse_peak_extra_mib"] = optional_json(parsed.peak_extra_mib);
  out["tokens"] = all_tokens;
  out["context_tokens"] = context_tokens;
  out["question_tokens"] = question_tokens;
  out["tokenize_s_1t"] = tokenized.seconds;
  out["tokenize_mb_s_1t"] = text_mb / tokenized.seconds;
  out["tokenize_file_mb_s_1t"] = file_mb / tokenized.seconds;
  out["tokens_per_s_1t"] = static_cast<double>(all_tokens) / tokenized.seconds;
  out["features"] = train.count;
  out["features_train_s_1t"] = train_1t.seconds;
  out["features_train_mb_s_1t"] = file_mb / train_1t.seconds;
  out["features_train_per_s_1t"] = n_features / train_1t.seconds;
  out["features_train_peak_extra_mib_1t"] = optional_json(train_1t.peak_extra_mib);
  out["features_train_s_nt"] = train_nt.seconds;
  out["features_train_mb_s_nt"] = file_mb / train_nt.seconds;
  out["features_train_per_s_nt"] = n_features / train_nt.seconds;
  out["features_train_peak_extra_mib_nt"] = optional_json(train_nt.peak_extra_mib);
  out["features_train_speedup_nt"] = train_1t.seconds / train_nt.seconds;
  out["features_nt_same_as_1t"] = same;
  out["feature_bytes"] = train.bytes;
  out["feature_bytes_per_feature"] = static_cast<double>(train.bytes) / n_features;
  out["features_eval"] = eval.count;
  out["features_eval_s_1t"] = eval_1t.seconds;
  out["features_eval_mb_s_1t"] = file_mb / eval_1t.seconds;
  out["features_eval_per_s_1t"] = static_cast<double>(eval.count) / eval_1t.seconds;
  out["features_eval_peak_extra_mib_1t"] = optional_json(eval_1t.peak_extra_mib);
  out["feature_bytes_eval"] = eval.bytes;
  out["feature_bytes_per_feature_eval"] = static_cast<double>(eval.bytes) / static_cast<double>(eval.count);
  out["padded_int32_bytes"] = n_features * max_seq * 3 * 4;  // ids, token types, mask at max_seq_length
  out["features_skipped"] = train.skipped;
  out["feature_tokens"] = train.tokens;
  out["feature_context_tokens_per_context_token"] =
      static_cast<double>(train.context_tokens) / static_cast<double>(context_tokens);
  out["pipeline_mb_s_1t"] = file_mb / pipeline_s;
  out["target_mb_s_per_core"] = target_mb_s_per_core;
  out["target_met"] = file_mb / pipeline_s >= target_mb_s_per_core;
  out["peak_rss_mib"] = peak_rss_mib();

  const auto row = [](const std::string& phase, double secs, const std::string& rate, const std::string& extra,
                      const std::string& memory) {
    std::printf("| %-40s | %10.3f | %-32s | %-20s | %14s |\n", phase.c_str(), secs * 1e3, rate.c_str(), extra.c_str(),
                memory.c_str());
  };
  std::printf("source %s: %.2f MB, %zu contexts (%.2f MB; %.2f MB if copied per question), %zu questions "
              "(%.2f MB)\n",
              source.c_str(), file_mb, dataset.contexts.size(), static_cast<double>(context_bytes) / 1e6,
              static_cast<double>(copied_context_bytes) / 1e6, dataset.examples.size(),
              static_cast<double>(question_bytes) / 1e6);
  std::printf("best of %d; MB = 10^6 bytes of the file unless marked text; %d threads for the nt row\n\n", s.repeats,
              s.threads);
  std::printf("| %-40s | %10s | %-32s | %-20s | %14s |\n", "phase", "ms", "throughput", "count", "peak extra MiB");
  std::printf("|%s|%s|%s|%s|%s|\n", std::string(42, '-').c_str(), std::string(12, '-').c_str(),
              std::string(34, '-').c_str(), std::string(22, '-').c_str(), std::string(16, '-').c_str());
  row("parse_squad", parsed.seconds, fixed(file_mb / parsed.seconds, 2) + " MB/s", std::to_string(dataset.examples.size()) + " questions",
      optional_text(parsed.peak_extra_mib));
  row("tokenize contexts + questions, 1 thread", tokenized.seconds,
      fixed(text_mb / tokenized.seconds, 2) + " text MB/s (" + fixed(file_mb / tokenized.seconds, 2) + " file)",
      std::to_string(all_tokens) + " tokens", optional_text(tokenized.peak_extra_mib));
  row("features, train, 1 thread", train_1t.seconds, fixed(file_mb / train_1t.seconds, 2) + " MB/s",
      std::to_string(train.count) + " (" + fixed(n_features / train_1t.seconds / 1e3, 1) + " k/s)",
      optional_text(train_1t.peak_extra_mib));
  row("features, train, " + std::to_string(s.threads) + " threads", train_nt.seconds,
      fixed(file_mb / train_nt.seconds, 2) + " MB/s", fixed(n_features / train_nt.seconds / 1e3, 1) + " k/s",
      optional_text(train_nt.peak_extra_mib));
  row("features, eval (no labels), 1 thread", eval_1t.seconds, fixed(file_mb / eval_1t.seconds, 2) + " MB/s",
      std::to_string(eval.count) + " (" + fixed(static_cast<double>(eval.count) / eval_1t.seconds / 1e3, 1) + " k/s)",
      optional_text(eval_1t.peak_extra_mib));
  row("parse + train features, 1 thread", pipeline_s, fixed(file_mb / pipeline_s, 2) + " MB/s per core", "", "");
  std::printf("\nfeatures: train %.2f MiB (%.0f bytes/feature), eval %.2f MiB (%.0f bytes/feature); "
              "padded int32 ids+types+mask would be %.2f MiB; %d threads give the same features: %s\n",
              static_cast<double>(train.bytes) / 1048576.0,
              static_cast<double>(train.bytes) / n_features,
              static_cast<double>(eval.bytes) / 1048576.0,
              static_cast<double>(eval.bytes) / static_cast<double>(eval.count),
              n_features * max_seq * 12 / 1048576.0, s.threads, same ? "yes" : "NO");
  std::printf("features hold %zu tokens, %zu of them context tokens: each context token %.2f times (%zu once)\n",
              train.tokens, train.context_tokens,
              static_cast<double>(train.context_tokens) / static_cast<double>(context_tokens), context_tokens);
  std::printf("peak RSS %.1f MiB; target %.1f MB/s per core: %s (%.2f)\n", peak_rss_mib(), target_mb_s_per_core,
              file_mb / pipeline_s >= target_mb_s_per_core ? "met" : "NOT met", file_mb / pipeline_s);
  std::cout << out.dump() << std::endl;
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  s.threads = tbb::info::default_concurrency();
  po::options_description options("cputrain-bench-text options");
  options.add_options()("help,h", "show this help")("vocab", po::value(&s.vocab),
                                                     "BERT vocab.txt or model directory (required)")(
      "megabytes", po::value(&s.megabytes)->default_value(s.megabytes), "size of the generated file, MB (10^6 bytes)")(
      "threads", po::value(&s.threads)->default_value(s.threads), "threads for the multi-threaded features row")(
      "file", po::value(&s.file), "a real SQuAD file instead of a generated one")(
      "keep", po::value(&s.keep), "write the generated file here")(
      "repeats", po::value(&s.repeats)->default_value(s.repeats), "runs per phase; the best is kept");
  std::optional<ct::text::bert_tokenizer> tokenizer;
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    if (s.vocab.empty()) throw ct::usage_error("--vocab PATH is required (a BERT vocab.txt)");
    if (!(s.megabytes > 0) || s.megabytes > 4000) throw ct::usage_error("--megabytes must be in (0, 4000]");
    if (s.threads < 1) throw ct::usage_error("--threads must be a positive integer");
    if (s.repeats < 1) throw ct::usage_error("--repeats must be a positive integer");
    if (!s.file.empty() && !s.keep.empty()) throw ct::usage_error("--keep writes a generated file; not with --file");
    std::error_code ec;
    if (!std::filesystem::exists(s.vocab, ec)) throw ct::usage_error("--vocab " + s.vocab + ": no such file");
    if (access(s.vocab.c_str(), R_OK) != 0) throw ct::usage_error("--vocab " + s.vocab + ": not readable");
    try {
      tokenizer.emplace(ct::text::load_bert_tokenizer(s.vocab));
    } catch (const std::exception& e) {
      throw ct::usage_error(std::string("--vocab: ") + e.what());
    }
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-text: " << e.what() << "\n" << options << "\n";
    return 2;
  }
  try {
    return run(s, *tokenizer);
  } catch (const ct::usage_error& e) {
    std::cerr << "cputrain-bench-text: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-text: " << e.what() << "\n";
    return 1;
  }
}
