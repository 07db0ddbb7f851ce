// ProgressLog: steps that shrink the program are always logged; other lines at most
// max_per_second a second at INFO, the rest at VLOG(1), counted on the next INFO line.
#include "reducer/progress.h"

#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reducer/reduction_state.h"

namespace aoti {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

struct Captured {
  double now = 0;
  std::vector<std::pair<int, std::string>> lines;
};

ProgressLog Log(Captured* c, int per_second) {
  return ProgressLog("", per_second, [c] { return c->now; },
                     [c](int level, const std::string& line) { c->lines.emplace_back(level, line); });
}

TEST(ProgressLog, HoldsBackABurstAndSaysHowManyOnTheNextLine) {
  Captured c;
  ProgressLog log = Log(&c, 2);
  log("  a");
  log("  b");
  log("  c");  // the third within a second
  log("  d");
  c.now = 1.5;
  log("  e");
  EXPECT_THAT(c.lines, ElementsAre(Pair(0, "  a"), Pair(0, "  b"), Pair(1, "  c"), Pair(1, "  d"),
                                   Pair(0, "  e   (2 lines held back, shown with --v=1)")));
  EXPECT_EQ(log.held_back(), 2);
}

TEST(ProgressLog, AStepThatShrinksTheProgramIsNeverHeldBack) {
  Captured c;
  ProgressLog log = Log(&c, 1);
  const std::string step = StepLine("localize_kernel", "27 -> 1 nodes", 2, 31.44, "node 'relu' of kernel k");
  EXPECT_EQ(step, "localize_kernel | 27 -> 1 nodes | 2 compiles | 31.4 s | node 'relu' of kernel k");
  log("  a");
  log(StepLine("bisect_prefix", "27 nodes left", 1, 3, "begins"));  // not a shrinking step
  log(step);
  EXPECT_EQ(c.lines[1].first, 1);
  EXPECT_EQ(c.lines[2], std::make_pair(0, step + "   (1 line held back, shown with --v=1)"));
}

TEST(ProgressLog, AtMostSoManyLinesASecondWhateverArrives) {
  Captured c;
  ProgressLog log = Log(&c, 4);
  int info = 0;
  for (int i = 0; i < 1000; ++i) {
    c.now = i * 0.001;  // 1000 lines in one second
    log("  candidate " + std::to_string(i));
  }
  for (const auto& [level, line] : c.lines) info += level == 0;
  EXPECT_EQ(info, 4);
}

TEST(StepLine, OneCompileIsSingular) {
  EXPECT_EQ(StepLine("sanity", "27 nodes", 1, 0.04, ""), "sanity | 27 nodes | 1 compile | 0.0 s");
}

}  // namespace
}  // namespace aoti
