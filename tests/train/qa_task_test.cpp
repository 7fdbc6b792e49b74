// Tests for include/cputrain/train/qa_task.hpp: the batches it makes for the trainer (padding as the options say,
// labels dropped for evaluation), the lengths --group_by_length reads, and predictions() splitting the head's
// [seq, 2] rows into start and end rows.
#include "cputrain/train/qa_task.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "support/tiny_qa_run.hpp"

namespace ct = cputrain;
using ct::train::qa_task;

TEST_CASE("qa_task's batches: padded to max_seq_length or to the longest feature, labels dropped for evaluation") {
  const ct::test::tiny_qa_run run("cputrain-qa-task", 2);
  REQUIRE(run.features.size() >= 3);
  // The two shortest features (a paragraph's last window is shorter than max_seq_length).
  std::vector<std::size_t> order(run.features.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return qa_task::length(run.features, a) < qa_task::length(run.features, b);
  });
  const std::vector<std::size_t> indices{order[1], order[0]};
  const ct::nn::qa_batch padded = qa_task::batch(run.features, indices, true);
  CHECK(padded.seq == qa_task::max_seq_length(run.features));
  CHECK(padded.seq == 64);
  ct::nn::qa_batch longest = qa_task::batch(run.features, indices, false);
  const std::size_t expected = qa_task::length(run.features, order[1]);
  CHECK(longest.seq == expected);
  CHECK(longest.seq < 64);
  REQUIRE(longest.has_labels());
  qa_task::drop_labels(longest);
  CHECK_FALSE(longest.has_labels());
  CHECK(longest.end_positions.empty());
}

TEST_CASE("qa_task::predictions splits each feature's [seq, 2] logits into its start row and its end row") {
  ct::train::logit_rows rows;
  rows.row_length = 6;  // seq 3
  rows.values = {1, -1, 2, -2, 3, -3,    // feature 0: start 1 2 3, end -1 -2 -3
                 4, -4, -100, -100, -100, -100};  // feature 1: one token, then padding
  const ct::train::qa_logits logits = qa_task::predictions(rows);
  CHECK(logits.row_length == 3);
  CHECK(logits.start == std::vector<float>{1, 2, 3, 4, -100, -100});
  CHECK(logits.end == std::vector<float>{-1, -2, -3, -4, -100, -100});
}
