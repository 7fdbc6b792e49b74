// Tests for include/cputrain/data/classification_metrics.hpp: run_glue's metrics against scikit-learn and SciPy on
// seeded random predictions (tests/data/data/classification_metrics_reference.json,
// scripts/make_classification_metrics_reference.py), the GLUE task table with its combined score, ties in Spearman's
// ranks, and the refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/data/classification_metrics.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace classification_metrics_test {

using namespace cputrain::data;

namespace {

nlohmann::json reference() {
  std::ifstream in(std::string(CPUTRAIN_DATA_TEST_DATA) + "/classification_metrics_reference.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// Equal to the libraries' value up to summation order.
bool close(double got, double want) { return std::abs(got - want) <= 1e-13 * std::max(1.0, std::abs(want)); }

}  // namespace

TEST_CASE("accuracy F1 and Matthews correlation equal scikit-learn's") {
  const auto ref = reference();
  REQUIRE(ref["classification"].size() >= 10);
  for (const auto& c : ref["classification"]) {
    const auto predictions = c["predictions"].get<std::vector<std::int64_t>>();
    const auto labels = c["labels"].get<std::vector<std::int64_t>>();
    INFO(labels.size() << " labels");
    CHECK(accuracy(predictions, labels) == c["accuracy"].get<double>());
    const double mcc = matthews_corrcoef(predictions, labels);
    INFO("Matthews " << mcc << " against " << c["matthews_correlation"].get<double>());
    CHECK(close(mcc, c["matthews_correlation"].get<double>()));
    if (c.contains("f1")) CHECK(close(binary_f1(predictions, labels), c["f1"].get<double>()));
  }
}

TEST_CASE("Pearson and Spearman correlation equal SciPy's with ties and NaN for a constant input") {
  const auto ref = reference();
  for (const auto& r : ref["regression"]) {
    const auto scores = r["scores"].get<std::vector<double>>();
    const auto targets = r["targets"].get<std::vector<double>>();
    INFO(scores.size() << " scores");
    if (r["pearson"].is_null()) {
      CHECK(std::isnan(pearson(scores, targets)));
      CHECK(std::isnan(spearman(scores, targets)));
      continue;
    }
    CHECK(close(pearson(scores, targets), r["pearson"].get<double>()));
    CHECK(close(spearman(scores, targets), r["spearmanr"].get<double>()));
  }
  CHECK(average_ranks(std::vector<double>{3.0, 1.0, 3.0, 2.0, 3.0}) == std::vector<double>{4.0, 1.0, 4.0, 2.0, 4.0});
}

TEST_CASE("glue_metrics reports each task's metrics and their mean as combined_score") {
  const std::vector<std::int64_t> predictions{1, 0, 1, 1, 0, 0, 1, 0};
  const std::vector<std::int64_t> labels{1, 0, 0, 1, 0, 1, 1, 0};
  const auto mrpc = glue_metrics("mrpc", predictions, labels);
  CHECK(mrpc.at("accuracy") == 0.75);
  CHECK(mrpc.at("f1") == 0.75);  // tp 3, fp 1, fn 1
  CHECK(mrpc.at("combined_score") == 0.75);
  CHECK(mrpc.size() == 3);
  const auto cola = glue_metrics("cola", predictions, labels);
  CHECK(cola.size() == 1);
  CHECK(close(cola.at("matthews_correlation"), 0.5));  // (3*3 - 1*1) / sqrt(4*4*4*4)
  CHECK(glue_metrics("rte", predictions, labels).at("accuracy") == 0.75);
  const std::vector<double> scores{0.1, 0.4, 0.35, 0.8}, targets{0.0, 0.5, 0.5, 1.0};
  const auto stsb = glue_metrics("stsb", {}, {}, scores, targets);
  CHECK(stsb.at("combined_score") == (stsb.at("pearson") + stsb.at("spearmanr")) / 2);
  CHECK(close(stsb.at("spearmanr"), 0.9486832980505138));  // ranks 1 3 2 4 against 1 2.5 2.5 4
  CHECK_THROWS_WITH(glue_metrics("squad", predictions, labels), Catch::Contains("--task_name squad: not a GLUE task"));
}

TEST_CASE("metrics refuse predictions and labels that do not pair up") {
  const std::vector<std::int64_t> three{0, 1, 1}, two{0, 1};
  CHECK_THROWS_WITH(accuracy(three, two), Catch::Contains("accuracy: 3 predictions but 2 labels"));
  CHECK_THROWS_WITH(accuracy({}, {}), Catch::Contains("no predictions"));
  CHECK_THROWS_WITH(binary_f1(std::vector<std::int64_t>{0, 2}, two), Catch::Contains("binary F1 takes classes 0 and 1"));
  CHECK_THROWS_WITH(pearson(std::vector<double>{1.0}, std::vector<double>{2.0}), Catch::Contains("at least 2"));
}

}  // namespace classification_metrics_test
