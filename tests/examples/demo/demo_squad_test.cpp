// Tests for examples/demo/ (demo_squad.hpp, demo_model.hpp): the same options give the same bytes and another
// seed other bytes; the files read back (read_squad checks every answer against its answer_start) into the same
// dataset; ids are unique, the unanswerable share is what was asked, every kind of question is there; eval people and
// towns never occur in train data; long paragraphs need several windows at max_seq_length 128 / doc_stride 32;
// the demo vocabulary covers every text without [UNK]; the model directory loads back.
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"

#include <cctype>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/data/qa_features.hpp"
#include "cputrain/data/squad_reader.hpp"
#include "cputrain/data/squad_writer.hpp"
#include "cputrain/io/bert_config_json.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"
#include "demo/demo_model.hpp"
#include "demo/demo_squad.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace demo_squad_test {

using namespace cputrain;
using namespace cputrain::data;
using namespace cputrain::demo;
using cputrain::test::says;
namespace dd = cputrain::demo::detail;

namespace {

demo_squad_options small(std::uint64_t seed = 1, demo_split split = demo_split::train) {
  demo_squad_options o;
  o.seed = seed;
  o.split = split;
  o.paragraphs = 400;
  return o;
}

text::bert_tokenizer demo_tokenizer() { return text::bert_tokenizer(text::vocabulary(demo_vocabulary(), "demo")); }

/// The words of `text`: runs of letters.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

/// The people ("First Last", both parts from the demo's name lists) named in the contexts of `d`.
std::set<std::string> people_in(const squad_dataset& d) {
  std::set<std::string> first, last;
  for (std::size_t k = 0; k < dd::demo_names::first_count; ++k) first.insert(dd::demo_names::first_name(k));
  for (std::size_t k = 0; k < dd::demo_names::last_count; ++k) last.insert(dd::demo_names::last_name(k));
  std::set<std::string> people;
  for (const std::string& context : d.contexts) {
    const auto words = words_of(context);
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      if (first.count(words[i]) != 0 && last.count(words[i + 1]) != 0) people.insert(words[i] + " " + words[i + 1]);
    }
  }
  return people;
}

/// The towns (a town start and a town ending) named in the contexts of `d`.
std::set<std::string> towns_in(const squad_dataset& d) {
  std::set<std::string> towns;
  for (const std::string& context : d.contexts) {
    for (const std::string& word : words_of(context)) {
      for (const auto start : dd::demo_town_starts) {
        for (const auto end : dd::demo_town_ends) {
          if (word == dd::demo_capitalized(start) + std::string(end)) towns.insert(word);
        }
      }
    }
  }
  return towns;
}

}  // namespace

TEST_CASE("the same options give the same file byte for byte and another seed another") {
  const std::string a = squad_json_text(make_demo_squad(small(7)));
  CHECK(a == squad_json_text(make_demo_squad(small(7))));
  CHECK(a != squad_json_text(make_demo_squad(small(8))));
  CHECK(a != squad_json_text(make_demo_squad(small(7, demo_split::eval))));
}

TEST_CASE("a written dataset reads back equal, every answer where answer_start says") {
  const test::temp_dir dir;
  for (const double unanswerable : {0.0, 0.2}) {
    auto options = small(3);
    options.unanswerable_fraction = unanswerable;
    const squad_dataset d = make_demo_squad(options);
    write_squad_json(d, dir.path() / "demo.json");
    // read_squad refuses any answer whose text is not found at its answer_start.
    const squad_dataset back = read_squad(dir.path() / "demo.json");
    CHECK(back.version == (unanswerable > 0 ? "v2.0" : "1.1"));
    CHECK(back.version == d.version);
    CHECK(back.contexts == d.contexts);
    REQUIRE(back.examples.size() == d.examples.size());
    for (std::size_t i = 0; i < d.examples.size(); ++i) {
      INFO(d.examples[i].id);
      CHECK(back.examples[i].id == d.examples[i].id);
      CHECK(back.examples[i].title == d.examples[i].title);
      CHECK(back.examples[i].question == d.examples[i].question);
      CHECK(back.examples[i].context_index == d.examples[i].context_index);
      CHECK(back.examples[i].answers == d.examples[i].answers);
      CHECK(back.examples[i].plausible_answers.empty());
    }
  }
}

TEST_CASE("the file has the official nested layout, with is_impossible in v2.0 only") {
  auto options = small(4);
  options.paragraphs = 30;
  const auto v2 = nlohmann::json::parse(squad_json_text(make_demo_squad(options)));
  CHECK(v2.at("version") == "v2.0");
  const auto& qa = v2.at("data").at(0).at("paragraphs").at(0).at("qas").at(0);
  CHECK(qa.contains("id"));
  CHECK(qa.contains("question"));
  CHECK(qa.at("answers").is_array());
  CHECK(qa.at("is_impossible").is_boolean());
  options.unanswerable_fraction = 0;
  const auto v1 = nlohmann::json::parse(squad_json_text(make_demo_squad(options)));
  CHECK(v1.at("version") == "1.1");
  CHECK_FALSE(v1.at("data").at(0).at("paragraphs").at(0).at("qas").at(0).contains("is_impossible"));
}

TEST_CASE("ids are unique and numbered per split") {
  const squad_dataset train = make_demo_squad(small(1));
  const squad_dataset eval = make_demo_squad(small(1, demo_split::eval));
  std::set<std::string> ids;
  for (const auto& e : train.examples) ids.insert(e.id);
  CHECK(ids.size() == train.examples.size());
  CHECK(train.examples.front().id == "demo-train-000000");
  CHECK(eval.examples.front().id == "demo-eval-000000");
}

TEST_CASE("the unanswerable share is the one asked for, and zero without v2") {
  for (const double fraction : {0.0, 0.2, 0.5}) {
    auto options = small(5);
    options.unanswerable_fraction = fraction;
    const squad_dataset d = make_demo_squad(options);
    std::size_t impossible = 0;
    for (const auto& e : d.examples) {
      impossible += e.is_impossible() ? 1 : 0;
      if (e.is_impossible()) CHECK(e.plausible_answers.empty());
    }
    INFO("fraction " << fraction << ": " << impossible << " of " << d.examples.size());
    CHECK(std::abs(static_cast<double>(impossible) / static_cast<double>(d.examples.size()) - fraction) <= 0.05);
    CHECK(d.examples.size() >= 4 * options.paragraphs);
  }
}

TEST_CASE("every kind of question is asked, answerable and unanswerable") {
  const squad_dataset d = make_demo_squad(small(6));
  for (const std::string_view start : {"who", "when", "where", "what", "how many", "which company",
                                       "which river", "in what year", "in which town"}) {
    INFO(start);
    std::size_t answerable = 0, unanswerable = 0;
    for (const auto& e : d.examples) {
      std::string q = e.question;
      for (char& c : q) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (q.rfind(start, 0) == 0) (e.is_impossible() ? unanswerable : answerable) += 1;
    }
    CHECK(answerable > 0);
    CHECK(unanswerable > 0);
  }
}

TEST_CASE("eval people and towns never occur in train data") {
  const squad_dataset train = make_demo_squad(small(1));
  const squad_dataset eval = make_demo_squad(small(2, demo_split::eval));
  const auto train_people = people_in(train), eval_people = people_in(eval);
  REQUIRE(train_people.size() > 100);
  REQUIRE(eval_people.size() > 100);
  for (const std::string& person : eval_people) {
    INFO(person);
    CHECK(train_people.count(person) == 0);
    for (const std::string& context : train.contexts) REQUIRE(context.find(person) == std::string::npos);
  }
  const auto train_towns = towns_in(train), eval_towns = towns_in(eval);
  REQUIRE(eval_towns.size() > 20);
  for (const std::string& town : eval_towns) {
    INFO(town);
    CHECK(train_towns.count(town) == 0);
  }
  // Different seeds of one split draw different people too.
  const auto other = people_in(make_demo_squad(small(9)));
  CHECK(other != train_people);
}

TEST_CASE("some contexts need several windows at max_seq_length 128 and doc_stride 32") {
  auto many = small(1);
  many.paragraphs = 2000;
  const squad_dataset d = make_demo_squad(many);
  qa_feature_options options;
  options.max_seq_length = 128;
  options.doc_stride = 32;
  const qa_features features = make_qa_features(d, demo_tokenizer(), options);
  CHECK(features.report().skipped == 0);
  std::set<std::uint32_t> multi_window;
  for (const auto& f : features.all()) {
    if (f.window > 0) multi_window.insert(d.examples[f.example].context_index);
  }
  INFO(multi_window.size() << " of " << d.contexts.size() << " contexts need more than one window");
  // One paragraph in 40 is long: about 50 here, with a standard deviation of 7.
  CHECK(multi_window.size() >= 25);
  CHECK(multi_window.size() <= 100);
  // ... and without long paragraphs, none does.
  auto options_short = small(1);
  options_short.long_paragraph_fraction = 0.0;
  const qa_features short_features = make_qa_features(make_demo_squad(options_short), demo_tokenizer(), options);
  for (const auto& f : short_features.all()) CHECK(f.window == 0);
}

TEST_CASE("the demo vocabulary is small, has the specials first and covers every text without UNK") {
  const std::vector<std::string> vocab = demo_vocabulary();
  REQUIRE(vocab.size() > 5);
  CHECK(vocab.size() < 3000);
  CHECK(std::vector<std::string>(vocab.begin(), vocab.begin() + 5) ==
        std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"});
  CHECK(std::set<std::string>(vocab.begin(), vocab.end()).size() == vocab.size());
  const auto tokenizer = demo_tokenizer();
  const auto unk = tokenizer.vocab().unk_id();
  for (const demo_split split : {demo_split::train, demo_split::eval}) {
    const squad_dataset d = make_demo_squad(small(11, split));
    std::size_t tokens = 0, words = 0;
    for (const std::string& context : d.contexts) {
      const auto t = tokenizer.encode(context);
      for (const auto id : t.ids) REQUIRE(id != unk);
      tokens += t.size();
      words += words_of(context).size();
    }
    for (const auto& e : d.examples) {
      for (const auto id : tokenizer.encode(e.question).ids) REQUIRE(id != unk);
    }
    // Words are whole tokens or a few pieces, not spelled letter by letter.
    CHECK(tokens < 2 * words);
  }
}

TEST_CASE("the demo model directory loads back as the config and tokenizer it was written from") {
  const test::temp_dir dir;
  const nn::bert_config config = demo_bert_config();
  CHECK(config.vocab_size == static_cast<int>(demo_vocabulary().size()));
  write_demo_model_dir(dir.path() / "model", config);
  CHECK(io::read_bert_config(dir.path() / "model" / "config.json") == config);
  const auto tokenizer = text::load_bert_tokenizer(dir.path() / "model");
  CHECK(tokenizer.vocab().size() == demo_vocabulary().size());
  CHECK(tokenizer.options().lower_case);
  CHECK(tokenizer.vocab().pad_id() == 0);
  const auto tokenizer_config = nlohmann::json::parse(std::ifstream(dir.path() / "model" / "tokenizer_config.json"));
  CHECK(tokenizer_config.at("model_max_length") == config.max_position_embeddings);

  nn::bert_config too_small = config;
  too_small.vocab_size = 10;
  CHECK_THROWS_MATCHES(write_demo_model_dir(dir.path() / "small", too_small), usage_error, says("vocab_size = 10"));
}

TEST_CASE("an unanswerable_fraction or long_paragraph_fraction outside [0, 1] is refused") {
  auto options = small(1);
  options.unanswerable_fraction = 1.5;
  CHECK_THROWS_MATCHES(make_demo_squad(options), usage_error, says("unanswerable_fraction"));
  options = small(1);
  options.long_paragraph_fraction = -0.1;
  CHECK_THROWS_MATCHES(make_demo_squad(options), usage_error, says("long_paragraph_fraction"));
}

TEST_CASE("an unanswerable question asks for a relation its paragraph does not state") {
  // The question's relation word, and the words any sentence stating that relation has.
  struct relation {
    std::string_view in_question;
    std::vector<std::string_view> in_context;
  };
  const std::vector<relation> relations{{"born", {"born"}},
                                        {"die", {"died"}},
                                        {"move", {"moved", "settled"}},
                                        {"found", {"founded", "started"}},
                                        {"make", {"made"}},
                                        {"employ", {"employed", "workers"}},
                                        {"workers", {"employed", "workers"}},
                                        {"river", {"river"}},
                                        {"population", {"inhabitants"}},
                                        {"inhabitants", {"inhabitants"}},
                                        {"sister", {"sister", "brother"}},
                                        {"brother", {"sister", "brother"}}};
  const squad_dataset d = make_demo_squad(small(12));
  std::size_t checked = 0;
  for (const auto& e : d.examples) {
    const auto question = words_of(e.question);
    const auto context_words = words_of(d.contexts[e.context_index]);
    const std::set<std::string> context(context_words.begin(), context_words.end());
    bool matched = false;
    for (const relation& r : relations) {
      bool asks = false;
      for (const std::string& w : question) asks = asks || w.rfind(r.in_question, 0) == 0;
      if (!asks) continue;
      matched = true;
      bool stated = false;
      for (const std::string_view w : r.in_context) stated = stated || context.count(std::string(w)) != 0;
      INFO(e.id << ": " << e.question << " | " << d.contexts[e.context_index]);
      // Unanswerable: the relation is absent. Answerable: it is there (the answer's sentence states it).
      CHECK(stated == !e.is_impossible());
    }
    INFO(e.question);
    CHECK(matched);
    checked += e.is_impossible() ? 1 : 0;
  }
  CHECK(checked > 200);
}

}  // namespace demo_squad_test
