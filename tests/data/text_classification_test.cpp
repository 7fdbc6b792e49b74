// run_glue's reading of a dataset table: the text columns it picks, the labels it infers (sorted distinct labels,
// float64 as regression, lists as multi-label, GLUE's names for a task), and each bad row refused by line.
#include "cputrain/data/text_classification.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace text_classification_test {

namespace ct = cputrain;
using Catch::Matchers::Contains;

ct::data::dataset_table csv(const std::string& text) { return ct::data::parse_csv_table(text, "t.csv"); }
ct::data::dataset_table jsonl(const std::string& text) { return ct::data::parse_json_table(text, "t.jsonl"); }

TEST_CASE("text_classification: run_glue's column choice") {
  auto c = ct::data::default_text_columns(csv("idx,sentence2,label,sentence1\n1,b,0,a\n"));
  CHECK(c.first == std::vector<std::string>{"sentence1"});
  CHECK(c.second == "sentence2");
  c = ct::data::default_text_columns(csv("label,question,passage,extra\n0,q,p,x\n"));
  CHECK(c.first == std::vector<std::string>{"question"});  // the first two columns that are not the label
  CHECK(c.second == "passage");
  c = ct::data::default_text_columns(csv("text,label\nhello,1\n"));
  CHECK(c.first == std::vector<std::string>{"text"});
  CHECK_FALSE(c.second.has_value());
  CHECK_THROWS_WITH(ct::data::default_text_columns(csv("label\n1\n")), Contains("no column besides 'label'"));
  c = ct::data::glue_columns("qnli");
  CHECK(c.first == std::vector<std::string>{"question"});
  CHECK(c.second == "sentence");
  CHECK_FALSE(ct::data::glue_columns("sst2").second.has_value());
}

TEST_CASE("text_classification: labels as run_glue infers them") {
  using kind = ct::data::label_scheme::kind;
  auto s = ct::data::infer_labels(jsonl("{\"t\":\"a\",\"label\":\"pos\"}\n{\"t\":\"b\",\"label\":\"neg\"}\n"
                                        "{\"t\":\"c\",\"label\":\"pos\"}\n"), "label");
  CHECK(s.type == kind::classification);
  CHECK(s.names == std::vector<std::string>{"neg", "pos"});
  s = ct::data::infer_labels(csv("t,label\na,10\nb,2\nc,-1\n"), "label");  // numbers sort as numbers
  CHECK(s.names == std::vector<std::string>{"-1", "2", "10"});
  s = ct::data::infer_labels(csv("t,label\na,0.5\nb,1\n"), "label");
  CHECK(s.type == kind::regression);
  CHECK(s.num_labels() == 1);
  s = ct::data::infer_labels(jsonl("{\"t\":\"a\",\"label\":[\"x\",\"b\"]}\n{\"t\":\"b\",\"label\":[]}\n"), "label");
  CHECK(s.type == kind::multi_label);
  CHECK(s.names == std::vector<std::string>{"b", "x"});
  CHECK(ct::data::glue_labels("mnli").names == std::vector<std::string>{"entailment", "neutral", "contradiction"});
  CHECK(ct::data::glue_labels("stsb").type == kind::regression);
}

TEST_CASE("text_classification: examples with their labels and the rows refused") {
  const auto table = csv("sentence1,sentence2,label\nA one.,B one.,equivalent\nA two.,B two.,0\nA three.,B three.,1\n");
  const auto columns = ct::data::glue_columns("mrpc");
  const auto labels = ct::data::glue_labels("mrpc");
  const auto ex = ct::data::read_classification_examples(table, columns, labels, true, true);
  CHECK(ex.first == std::vector<std::string>{"A one.", "A two.", "A three."});
  CHECK(ex.second == std::vector<std::string>{"B one.", "B two.", "B three."});
  CHECK(ex.class_ids == std::vector<std::int64_t>{1, 0, 1});  // a name, and GLUE's ids (text in a mixed column)
  const auto bad = csv("sentence1,sentence2,label\nA.,B.,1\nA.,B.,2\n");
  CHECK_THROWS_WITH(ct::data::read_classification_examples(bad, columns, labels, true, true),
                    "t.csv: line 3: column 'label': the label 2 is not among the labels (not_equivalent, "
                    "equivalent) nor an id below 2");
  const auto empty = csv("sentence1,sentence2,label\nA.,,1\n");
  CHECK_THROWS_WITH(ct::data::read_classification_examples(empty, columns, labels, false, true),
                    "t.csv: line 2: column 'sentence2': no text");
  // Without a task, an integer label is a name like any other: 0 is not id 0 of ("1", "5").
  const auto numbers = csv("text,label\na,5\nb,1\nc,0\n");
  ct::data::text_columns single;
  single.first = {"text"};
  ct::data::label_scheme two;
  two.names = {"1", "5"};
  CHECK_THROWS_WITH(ct::data::read_classification_examples(numbers, single, two, true),
                    Contains("line 4: column 'label': the label 0 is not among the labels (1, 5)"));
  // Joined text columns (run_classification's --text_column_names) and multi-label targets.
  const auto multi = jsonl("{\"a\":\"x\",\"b\":\"y\",\"label\":[\"odd\"]}\n{\"a\":\"z\",\"b\":\"w\",\"label\":[]}\n");
  ct::data::text_columns joined;
  joined.first = {"a", "b"};
  joined.delimiter = " | ";
  const auto m = ct::data::read_classification_examples(multi, joined, ct::data::infer_labels(multi, "label"), true);
  CHECK(m.first == std::vector<std::string>{"x | y", "z | w"});
  CHECK(m.values == std::vector<float>{1.0f, 0.0f});
  CHECK(m.values_per_example == 1);
}

}  // namespace text_classification_test
