#include "harness/util/failure_class.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace aoti {
namespace {

TEST(FailureClass, EveryNameIsItsOwnAndReadsBack) {
  std::set<std::string> names;
  for (FailureClass c : AllFailureClasses()) {
    EXPECT_TRUE(names.insert(Name(c)).second) << Name(c) << " is named twice";
    EXPECT_EQ(ClassOf(Name(c)), c) << Name(c);
  }
  EXPECT_EQ(names.size(), 15u);
}

TEST(FailureClass, ACrashNamesItsSignal) {
  EXPECT_TRUE(Is("signal SIGSEGV (Segmentation fault)", FailureClass::kSignal));
  EXPECT_TRUE(Is("signal SIGILL (Illegal instruction)", FailureClass::kSignal));
  EXPECT_FALSE(Is("signals", FailureClass::kSignal));
  EXPECT_TRUE(Is("", FailureClass::kPasses));
  EXPECT_EQ(ClassOf("compile server timeout"), std::nullopt);
  EXPECT_FALSE(Is("compile server timeout", FailureClass::kTimeout));
}

TEST(FailureClass, TheCompilersFailuresAreWhatAReductionKeeps) {
  for (const char* c : {"compile error", "load error", "runtime error", "signal SIGABRT (Aborted)", "timeout",
                        "accuracy"}) {
    EXPECT_TRUE(IsCompilerFailure(c)) << c;
  }
  for (const char* c : {"", "passes", "preflight", "export error", "harness error", "nondeterministic",
                        "unreliable reference", "harness disagreement", "not supported", "invalid inputs"}) {
    EXPECT_FALSE(IsCompilerFailure(c)) << c;
  }
}

TEST(FailureClass, CrashesRaiseCrashOrHang) {
  EXPECT_TRUE(IsCrash("runtime error"));
  EXPECT_TRUE(IsCrash("timeout"));
  EXPECT_TRUE(IsCrash("signal SIGSEGV (Segmentation fault)"));
  EXPECT_FALSE(IsCrash("accuracy"));
  EXPECT_FALSE(IsCrash("compile error"));
  EXPECT_FALSE(IsCrash("load error"));
}

}  // namespace
}  // namespace aoti
