// Tests for include/cputrain/data/dataset_table.hpp: the column types pandas.read_csv and pyarrow give the files
// Hugging Face's example scripts load (int64, float64 once a cell is empty, bool, string, lists), CSV quoting, CRLF,
// BOM and blank lines, JSON Lines and a JSON list giving one table, the lines of rows, and the refusals (ragged
// rows, mixed JSON types, a top-level object, invalid JSON and UTF-8, no rows, an unknown extension) with their
// exact messages.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/data/dataset_table.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace dataset_table_test {

using namespace cputrain::data;

namespace {

/// The message of the data_error `f` throws, or a marker a check cannot mistake for one.
template <class F>
std::string data_error_message(F&& f) {
  try {
    f();
  } catch (const data_error& e) {
    return e.what();
  }
  return "(no data_error)";
}

dataset_table csv(const std::string& text) { return parse_csv_table(text, "t.csv"); }
dataset_table json(const std::string& text) { return parse_json_table(text, "t.jsonl"); }

std::string csv_error(const std::string& text) {
  return data_error_message([&] { (void)csv(text); });
}
std::string json_error(const std::string& text) {
  return data_error_message([&] { (void)json(text); });
}

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  REQUIRE(out);
}

/// The same columns, types, cells and lines.
void check_same(const dataset_table& a, const dataset_table& b) {
  CHECK(a.column_names == b.column_names);
  CHECK(a.column_types == b.column_types);
  CHECK(a.row_lines == b.row_lines);
  REQUIRE(a.columns.size() == b.columns.size());
  for (std::size_t c = 0; c < a.columns.size(); ++c) CHECK(a.columns[c] == b.columns[c]);
}

}  // namespace

TEST_CASE("CSV integer columns are int64 until a cell is empty or has a fraction") {
  const auto t = csv("id,score,count,padded\n1,1.5,7, 7 \n-2,2,,+8\n3,1e3,9,9\n");
  CHECK(t.column_names == std::vector<std::string>{"id", "score", "count", "padded"});
  CHECK(t.size() == 3);
  CHECK(t.type("id") == column_type::integer);
  CHECK(t.integer(1, "id") == -2);
  // One non-integer makes the column float64, the integers in it included.
  CHECK(t.type("score") == column_type::floating);
  CHECK(t.floating(0, "score") == 1.5);
  CHECK(t.floating(1, "score") == 2.0);
  CHECK(t.floating(2, "score") == 1000.0);
  // pandas reads an empty cell as NaN, which an int64 column cannot hold: the column becomes float64.
  CHECK(t.type("count") == column_type::floating);
  CHECK(t.floating(0, "count") == 7.0);
  CHECK(t.is_null(1, "count"));
  // str_to_int64 skips the spaces around a number, and takes a '+'.
  CHECK(t.type("padded") == column_type::integer);
  CHECK(t.integer(0, "padded") == 7);
  CHECK(t.integer(1, "padded") == 8);
}

TEST_CASE("CSV cells pandas reads as NaN and the infinities") {
  const auto t = csv("a,b,c,d\nnan,inf,NA,x\nNaN,-Infinity,,None\nnull,+INF,N/A,y\n");
  // Every cell of "a" and "c" is one of pandas' na_values: a float64 column of nulls.
  CHECK(t.type("a") == column_type::floating);
  CHECK(t.type("c") == column_type::floating);
  for (std::size_t r = 0; r < 3; ++r) {
    CHECK(t.is_null(r, "a"));
    CHECK(t.is_null(r, "c"));
  }
  CHECK(t.type("b") == column_type::floating);
  CHECK(t.floating(0, "b") == std::numeric_limits<double>::infinity());
  CHECK(t.floating(1, "b") == -std::numeric_limits<double>::infinity());
  CHECK(t.floating(2, "b") == std::numeric_limits<double>::infinity());
  // "None" is NA in a text column too.
  CHECK(t.type("d") == column_type::string);
  CHECK(t.string(0, "d") == "x");
  CHECK(t.is_null(1, "d"));
}

TEST_CASE("CSV bool columns and the columns that fall back to text") {
  const auto t = csv("flag,mixed,numbers,odd,nanlike\nTrue,True,1,1.5.2,NAN\nfalse,1,x,1e,1\nTRUE,,2.50,.5,2\n");
  CHECK(t.type("flag") == column_type::boolean);
  CHECK(t.boolean(0, "flag"));
  CHECK_FALSE(t.boolean(1, "flag"));
  CHECK(t.boolean(2, "flag"));
  // A bool beside a number is neither: pandas keeps the text.
  CHECK(t.type("mixed") == column_type::string);
  CHECK(t.string(0, "mixed") == "True");
  CHECK(t.string(1, "mixed") == "1");
  CHECK(t.is_null(2, "mixed"));
  // Text keeps numbers as written.
  CHECK(t.type("numbers") == column_type::string);
  CHECK(t.string(2, "numbers") == "2.50");
  // Not numbers to pandas' xstrtod: two points, an exponent without digits; ".5" is one.
  CHECK(t.type("odd") == column_type::string);
  CHECK(t.string(2, "odd") == ".5");
  // "NAN" is not among pandas' na_values, and not a number.
  CHECK(t.type("nanlike") == column_type::string);
  CHECK(t.string(0, "nanlike") == "NAN");
}

TEST_CASE("CSV quoted fields hold commas quotes and line breaks") {
  const std::string text =
      "id,text,label\n"
      "1,\"a, b\",0\n"
      "2,\"say \"\"hi\"\"\",1\n"
      "3,\"line one\nline two\",\"0\"\n"
      "4,\"x\"y,1\n"
      "5,a\"b,0\n";
  const auto t = csv(text);
  REQUIRE(t.size() == 5);
  CHECK(t.string(0, "text") == "a, b");
  CHECK(t.string(1, "text") == "say \"hi\"");
  CHECK(t.string(2, "text") == "line one\nline two");
  CHECK(t.string(3, "text") == "xy");    // pandas keeps what follows a closing quote
  CHECK(t.string(4, "text") == "a\"b");  // a quote inside an unquoted field is text
  // Quoting does not make a number text.
  CHECK(t.type("label") == column_type::integer);
  CHECK(t.integer(2, "label") == 0);
  // The record with a line break inside starts on line 4 and the next one on line 6.
  CHECK(t.row_lines == std::vector<std::size_t>{2, 3, 4, 6, 7});
}

TEST_CASE("CSV with CRLF and a BOM reads as the same table") {
  const std::string lf = "id,text\n1,\"two\nlines\"\n2,plain\n";
  std::string crlf = "\xEF\xBB\xBFid,text\r\n1,\"two\r\nlines\"\r\n2,plain\r\n";
  const auto a = csv(lf);
  const auto b = csv(crlf);
  CHECK(b.column_names.front() == "id");
  CHECK(a.column_names == b.column_names);
  CHECK(a.row_lines == b.row_lines);
  CHECK(a.row_lines == std::vector<std::size_t>{2, 4});
  CHECK(b.string(1, "text") == "plain");
  // Inside quotes the line break is kept as written.
  CHECK(b.string(0, "text") == "two\r\nlines");
  // No final line break; a lone CR ends a record as in pandas.
  const auto c = csv("a,b\r1,2\r3,4");
  CHECK(c.row_lines == std::vector<std::size_t>{2, 3});
  CHECK(c.integer(1, "b") == 4);
}

TEST_CASE("CSV blank lines are skipped and rows keep their own lines") {
  const auto t = csv("\n a,b\n\n1,2\n  \t \n3,4\n\n");
  // The header's leading space stays part of the name, as in pandas.
  CHECK(t.column_names == std::vector<std::string>{" a", "b"});
  CHECK(t.row_lines == std::vector<std::size_t>{4, 6});
  CHECK(t.integer(1, " a") == 3);
}

TEST_CASE("CSV header names are made unique as pandas makes them") {
  CHECK(csv("x,x,x\n1,2,3\n").column_names == std::vector<std::string>{"x", "x.1", "x.2"});
  // An empty name is "Unnamed: <position>"; a repeat skips the names the header already has.
  CHECK(csv(",a,a,a.1,b\n1,2,3,4,5\n").column_names ==
        std::vector<std::string>{"Unnamed: 0", "a", "a.2", "a.1", "b"});
}

TEST_CASE("CSV rows with too many or too few fields are refused with their line") {
  CHECK(csv_error("a,b,c,d\n1,2,3,4\n\n\"multi\nline\",2,3,4\n1,2,3,4\n1,2,3\n") ==
        "t.csv: line 7: 3 fields, the header has 4");
  CHECK(csv_error("a,b\n1,2\n1,2,3\n") == "t.csv: line 3: 3 fields, the header has 2");
  CHECK(csv_error("a,b\n1\n") == "t.csv: line 2: 1 field, the header has 2");
  // A trailing comma is one more (empty) field.
  CHECK(csv_error("a,b\n1,2,\n") == "t.csv: line 2: 3 fields, the header has 2");
}

TEST_CASE("CSV files that cannot be read are refused naming the problem") {
  CHECK(csv_error("") == "t.csv: the file is empty: no header and no rows");
  CHECK(csv_error("\n  \n") == "t.csv: the file is empty: no header and no rows");
  CHECK(csv_error("a,b\n") == "t.csv: no rows, only the header line");
  CHECK(csv_error("a,b\n1,2\n3,\"open\nstill open\n") ==
        "t.csv: line 3: a quoted field starts here and is not closed before the end of the file");
  CHECK(csv_error("a,b\n1,2\n3,caf\xC3(\n") == "t.csv: invalid UTF-8 at line 3, column 6");
  // Beyond int64 pandas would switch to uint64 or text; this reader refuses rather than guess.
  CHECK(csv_error("id\n1\n9223372036854775808\n") ==
        "t.csv: line 3: column 'id': 9223372036854775808 is beyond the int64 range (pandas would read the column "
        "as uint64 or as text; this reader does neither)");
  const auto text = csv("id\n9223372036854775808\nabc\n");
  CHECK(text.string(0, "id") == "9223372036854775808");
  // Beside a fraction it is a float64, as pandas reads it.
  const auto floats = csv("id\n100000000000000000000\n1.5\n");
  CHECK(floats.type("id") == column_type::floating);
  CHECK(floats.floating(0, "id") == 1e20);
  CHECK(csv("id\n-9223372036854775808\n").integer(0, "id") == std::numeric_limits<std::int64_t>::min());
}

TEST_CASE("JSON Lines columns get the types pyarrow infers") {
  const std::string text =
      "{\"label\": 1, \"score\": 1, \"text\": \"a\", \"ok\": true, \"tokens\": [\"x\", \"y\"], \"tags\": [1, 2]}\n"
      "\n"
      "{\"label\": 0, \"score\": 2.5, \"text\": null, \"ok\": false, \"tokens\": [], \"tags\": [0], \"extra\": null}\n"
      "{\"score\": -3, \"tokens\": [\"z\"], \"tags\": [], \"vec\": [1, 0.5], \"meta\": {\"k\": 1}}\n";
  const auto t = json(text);
  // First-seen key order, not nlohmann's sorted one.
  CHECK(t.column_names ==
        std::vector<std::string>{"label", "score", "text", "ok", "tokens", "tags", "extra", "vec", "meta"});
  CHECK(t.row_lines == std::vector<std::size_t>{1, 3, 4});
  CHECK(t.type("label") == column_type::integer);
  CHECK(t.integer(1, "label") == 0);
  CHECK(t.is_null(2, "label"));  // a missing key is null
  // Integers and non-integers together are float64.
  CHECK(t.type("score") == column_type::floating);
  CHECK(t.floating(0, "score") == 1.0);
  CHECK(t.floating(1, "score") == 2.5);
  CHECK(t.floating(2, "score") == -3.0);
  CHECK(t.type("text") == column_type::string);
  CHECK(t.type("ok") == column_type::boolean);
  CHECK(t.type("tokens") == column_type::list_of_strings);
  CHECK(t.strings(0, "tokens") == std::vector<std::string>{"x", "y"});
  CHECK(t.strings(1, "tokens").empty());
  CHECK(t.type("tags") == column_type::list_of_integers);
  CHECK(t.integers(0, "tags") == std::vector<std::int64_t>{1, 2});
  CHECK(t.type("extra") == column_type::null_only);
  CHECK(t.type("vec") == column_type::list_of_floats);
  CHECK(t.floats(2, "vec") == std::vector<double>{1.0, 0.5});
  CHECK(t.type("meta") == column_type::other);
  CHECK(t.cell(2, "meta") == nlohmann::json{{"k", 1}});
}

TEST_CASE("JSON Lines and a JSON list of objects give the same table") {
  const auto lines = json("{\"sentence\": \"it works\", \"label\": 1}\n"
                          "{\"label\": 0, \"sentence\": \"[not, a list]\", \"w\": 0.5}\n");
  CHECK(lines.column_names == std::vector<std::string>{"sentence", "label", "w"});
  CHECK(lines.row_lines == std::vector<std::size_t>{1, 2});
  // The same rows as a list, on one line and laid out over several.
  check_same(lines, json("[{\"sentence\": \"it works\", \"label\": 1},\n"
                         " {\"label\": 0, \"sentence\": \"[not, a list]\", \"w\": 0.5}]\n"));
  const auto spread = json(
      "[\n"
      "  {\n"
      "    \"sentence\": \"it works\",\n"
      "    \"label\": 1\n"
      "  },\n"
      "  {\"label\": 0, \"sentence\": \"[not, a list]\", \"w\": 0.5}\n"
      "]\n");
  CHECK(spread.column_names == std::vector<std::string>{"sentence", "label", "w"});
  CHECK(spread.row_lines == std::vector<std::size_t>{2, 6});
  CHECK(spread.string(1, "sentence") == "[not, a list]");
  CHECK(spread.type("w") == column_type::floating);
  CHECK(spread.is_null(0, "w"));
}

TEST_CASE("JSON columns with mixed types are refused naming both lines") {
  CHECK(json_error("{\"label\": \"pos\"}\n{\"label\": null}\n{\"label\": 7}\n") ==
        "t.jsonl: line 3: column 'label': an integer (7), but line 1 has a string (\"pos\"); Hugging Face datasets "
        "(pyarrow) cannot hold both in one column");
  CHECK(json_error("{\"a\": 1}\n{\"a\": true}\n") ==
        "t.jsonl: line 2: column 'a': a boolean (true), but line 1 has an integer (1); Hugging Face datasets "
        "(pyarrow) cannot hold both in one column");
  CHECK(json_error("{\"a\": [\"x\"]}\n{\"a\": \"x\"}\n") ==
        "t.jsonl: line 2: column 'a': a string (\"x\"), but line 1 has a list; Hugging Face datasets (pyarrow) "
        "cannot hold both in one column");
  CHECK(json_error("{\"tags\": [1, 2]}\n{\"tags\": [3, \"B-PER\"]}\n") ==
        "t.jsonl: line 2: column 'tags': a list holding a string (\"B-PER\"), but line 1 has a list holding an "
        "integer (1); Hugging Face datasets (pyarrow) cannot hold both in one column");
  // In a list of objects, the lines are where the objects start.
  CHECK(json_error("[\n{\"a\": 1.5},\n\n{\"a\": \"x\"}\n]") ==
        "t.jsonl: line 4: column 'a': a string (\"x\"), but line 2 has a non-integer number (1.5); Hugging Face "
        "datasets (pyarrow) cannot hold both in one column");
  CHECK(json_error("{\"id\": 9223372036854775808}\n") ==
        "t.jsonl: line 1: column 'id': 9223372036854775808 is beyond the int64 range");
}

TEST_CASE("JSON files that are not rows are refused naming the problem") {
  CHECK(json_error("{\n  \"version\": \"v2.0\",\n  \"data\": []\n}\n") ==
        "t.jsonl: the top level is one object (keys \"data\", \"version\"), not JSON Lines or a list of objects; "
        "Hugging Face's json loader reads such a file only with field=<the key of its list>");
  CHECK(json_error("{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3,}\n") ==
        "t.jsonl: line 3, column 9: not valid JSON: syntax error while parsing object key - unexpected '}'; "
        "expected string literal");
  // Spread over lines, the error is placed in the whole file.
  CHECK(json_error("{\n  \"a\": [1,\n  2,,\n]}\n") ==
        "t.jsonl: line 3, column 5: not valid JSON: syntax error while parsing value - unexpected ','; expected "
        "'[', '{', or a literal");
  CHECK(json_error("{\"a\": 1}\n[1, 2]\n") ==
        "t.jsonl: line 2: a list, not an object (JSON Lines: one object per line)");
  CHECK(json_error("\"text\"\n") ==
        "t.jsonl: line 1: a string (\"text\"), not an object (JSON Lines: one object per line)");
  CHECK(json_error("[{\"a\": 1},\n 5]") ==
        "t.jsonl: line 2: element 1 of the top-level list is an integer (5), not an object (one object per row)");
  CHECK(json_error("[{\"a\": 1}] [") ==
        "t.jsonl: line 1, column 12: not valid JSON: syntax error while parsing value - unexpected '['; expected "
        "end of input");
  CHECK(json_error("") == "t.jsonl: the file is empty: no rows");
  CHECK(json_error(" \n\n") == "t.jsonl: the file is empty: no rows");
  CHECK(json_error("[]") == "t.jsonl: no rows");
  CHECK(json_error("{\"a\": \"ok\"}\n{\"a\": \"caf\xC3\"}\n") == "t.jsonl: invalid UTF-8 at line 2, column 11");
}

TEST_CASE("dataset table accessors name the file line and column") {
  const auto t = json("{\"label\": 1, \"tags\": [1, null]}\n{\"label\": null, \"tags\": []}\n");
  CHECK(data_error_message([&] { (void)t.floating(0, "label"); }) ==
        "t.jsonl: line 1: column 'label': the column is int64, not float64");
  CHECK(data_error_message([&] { (void)t.integer(1, "label"); }) ==
        "t.jsonl: line 2: column 'label': is null (an empty cell or a missing key)");
  CHECK(data_error_message([&] { (void)t.integers(0, "tags"); }) ==
        "t.jsonl: line 1: column 'tags': element 1 of the list is null");
  CHECK(data_error_message([&] { (void)t.type("labels"); }) ==
        "t.jsonl: no column 'labels'; the columns are 'label', 'tags'");
  CHECK(t.has_column("tags"));
  CHECK_FALSE(t.has_column("labels"));
  CHECK_THROWS_AS(t.cell(2, "label"), cputrain::usage_error);
  CHECK(std::string(column_type_name(column_type::list_of_strings)) == "list of string");
}

TEST_CASE("read_dataset_table takes the format from the extension") {
  const cputrain::test::temp_dir dir("cputrain-dataset-table");
  const std::string rows = "{\"text\": \"a\", \"label\": 0.5}\n";
  write(dir.path() / "train.csv", "text,label\na,0.5\n");
  write(dir.path() / "train.jsonl", rows);
  write(dir.path() / "train.json", rows);
  write(dir.path() / "train.txt", rows);
  const auto from_csv = read_dataset_table(dir.path() / "train.csv");
  CHECK(from_csv.source == (dir.path() / "train.csv").string());
  CHECK(from_csv.type("label") == column_type::floating);
  const auto from_jsonl = read_dataset_table(dir.path() / "train.jsonl");
  const auto from_json = read_dataset_table(dir.path() / "train.json");
  check_same(from_jsonl, from_json);
  CHECK(from_csv.column_names == from_json.column_names);
  CHECK(from_csv.columns == from_json.columns);
  CHECK(data_error_message([&] { (void)read_dataset_table(dir.path() / "train.txt"); }) ==
        (dir.path() / "train.txt").string() +
            ": extension '.txt'; a dataset table is read from a .csv, .json or .jsonl file");
  CHECK(data_error_message([&] { (void)read_dataset_table(dir.path() / "train"); }) ==
        (dir.path() / "train").string() + ": no extension; a dataset table is read from a .csv, .json or .jsonl file");
  // A missing file is named, with the system's reason.
  CHECK_THAT(data_error_message([&] { (void)read_dataset_table(dir.path() / "missing.csv"); }),
             Catch::StartsWith((dir.path() / "missing.csv").string() + ": cannot open"));
}

}  // namespace dataset_table_test
