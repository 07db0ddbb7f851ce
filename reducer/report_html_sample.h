// SampleReductionForReport: a reduction result as the reducer gives one, for the tests of
// report.html: testdata/corpus/mlp.pt2 reduced to one node (its relu, the culprit), two
// steps, and an accuracy error profile with drift in one row of the output (the compiled
// model's) next to rounding noise (eager's).
#pragma once

#include "reducer/reducer.h"

namespace aoti {

constexpr char kSampleReportPackage[] = "testdata/corpus/mlp.pt2";

ReduceResult SampleReductionForReport();

}  // namespace aoti
