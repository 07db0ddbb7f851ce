// Deadline: what TEST_TIMEOUT makes of it, and how it caps the timeouts taken from it.
#include "harness/util/deadline.h"

#include <gtest/gtest.h>

namespace aoti {
namespace {

TEST(Deadline, NoneOutsideBazelOrOnANonsenseTimeout) {
  const auto now = Deadline::Clock::now();
  for (const char* t : {static_cast<const char*>(nullptr), "", "soon", "-5", "300s", "0"}) {
    const Deadline d = Deadline::ForTestTimeout(t, now);
    EXPECT_FALSE(d.set()) << (t ? t : "null");
    EXPECT_EQ(d.Cap(123), 123);
    EXPECT_FALSE(d.Passed());
  }
}

TEST(Deadline, IsTheTestTimeoutLessTheReserveForTheArtifacts) {
  EXPECT_EQ(Deadline::ArtifactReserveSeconds(60), 30);
  EXPECT_EQ(Deadline::ArtifactReserveSeconds(300), 30);
  EXPECT_EQ(Deadline::ArtifactReserveSeconds(900), 90);
  const Deadline d = Deadline::ForTestTimeout("300", Deadline::Clock::now());
  ASSERT_TRUE(d.set());
  EXPECT_NEAR(d.SecondsLeft(), 270, 1);
  EXPECT_EQ(d.Cap(75), 75) << "a timeout within what is left stands";
  EXPECT_NEAR(d.Cap(600), 270, 1) << "a longer one is cut to what is left";
  EXPECT_TRUE(d.Caps(600));
  EXPECT_FALSE(d.Caps(75));
  EXPECT_NE(d.what().find("TEST_TIMEOUT of 300 s, less 30 s"), std::string::npos) << d.what();
}

TEST(Deadline, OncePassedCapsEverythingToNothing) {
  // A test that started 100 s ago with a 60 s timeout: its deadline passed 70 s ago.
  const Deadline d = Deadline::ForTestTimeout("60", Deadline::Clock::now() - std::chrono::seconds(100));
  EXPECT_TRUE(d.Passed());
  EXPECT_LT(d.SecondsLeft(), -69);
  EXPECT_EQ(d.Cap(10), 0);
}

// Within: one run's allowance under the process' deadline, whichever comes first, saying which.
TEST(Deadline, WithinIsTheEarlierOfTheTwo) {
  const auto now = Deadline::Clock::now();
  const Deadline none;
  const Deadline run = none.Within(300, "the run's timeout");
  EXPECT_TRUE(run.set());
  EXPECT_EQ(run.what(), "the run's timeout");
  EXPECT_NEAR(run.SecondsLeft(), 300, 5);
  const Deadline test(now + std::chrono::seconds(100), "the test's");
  EXPECT_EQ(test.Within(300, "the run's timeout").what(), "the test's");
  EXPECT_EQ(test.Within(10, "the run's timeout").what(), "the run's timeout");
  EXPECT_NEAR(test.Within(10, "the run's timeout").SecondsLeft(), 10, 5);
  EXPECT_EQ(test.Within(0, "none").what(), "the test's") << "no timeout adds no deadline";
  EXPECT_FALSE(none.Within(0, "none").set());
}

TEST(Deadline, NextSizeUp) {
  EXPECT_EQ(NextTestSize(60), (std::pair<std::string, int>{"medium", 300}));
  EXPECT_EQ(NextTestSize(59), (std::pair<std::string, int>{"small", 60}));
  EXPECT_EQ(NextTestSize(300), (std::pair<std::string, int>{"large", 900}));
  EXPECT_EQ(NextTestSize(3600), (std::pair<std::string, int>{"", 0}));
}

}  // namespace
}  // namespace aoti
