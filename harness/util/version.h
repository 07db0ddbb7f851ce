// The harness's version: in every compile cache key (a harness that compiles differently
// never takes another's entries), in report.md and summary.json.
#pragma once

namespace aoti {

constexpr char kHarnessVersion[] = "aoti_harness 2026.12.3";

}  // namespace aoti
