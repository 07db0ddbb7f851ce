// flags_help: every --aoti_* flag of a model test, as a Markdown table (flag, default,
// what it does), from the flags' own definitions. The README's table and the doc-command
// test (tools/doc_commands.py) read it, so no flag is documented that does not exist.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <gflags/gflags.h>

#include "plugin/flags.h"

int main(int argc, char** argv) {
  gflags::SetUsageMessage("prints every --aoti_* flag of a model test as a Markdown table");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::sort(flags.begin(), flags.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::cout << "| flag | default | what |\n| --- | --- | --- |\n";
  for (const auto& f : flags) {
    if (f.name.rfind("aoti_", 0) != 0) continue;
    std::string what = f.description;
    std::replace(what.begin(), what.end(), '|', '/');
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::cout << "| `--" << f.name << "` | `" << (f.default_value.empty() ? "\"\"" : f.default_value) << "` | " << what
              << " |\n";
  }
  return 0;
}
