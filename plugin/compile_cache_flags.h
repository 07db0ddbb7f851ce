// The edge where the compile cache's flags (--aoti_compile_cache_dir, _max_mb, and the
// remote cache's --aoti_remote_cache, _instance_name, _timeout_s) become
// CompileCacheOptions, for the listener and aoti_reduce alike.
#pragma once

#include "reducer/compile_cache.h"

namespace aoti {

// CompileCacheOptionsFromFlags: CompileCacheOptionsFor the flags' values; throws
// HarnessError naming the flag for a bad one.
CompileCacheOptions CompileCacheOptionsFromFlags();

}  // namespace aoti
