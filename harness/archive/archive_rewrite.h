// RewriteArchive, for tests: a copy of an archive with some records changed or dropped
// (a package as another host would have written it, a weight's data missing, ...).
#pragma once

#include <functional>
#include <string>

#include "harness/archive/pt2_archive.h"

namespace aoti {

// RewriteArchive writes `archive` to `path`, each record passed through edit(name, &data),
// which may change the data and returns false to drop the record. The writer's own records
// (version, byte order, serialization id) are written afresh.
void RewriteArchive(const Pt2Archive& archive, const std::string& path,
                    const std::function<bool(const std::string& name, std::string* data)>& edit);

}  // namespace aoti
