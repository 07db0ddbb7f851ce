#include "plugin/compile_cache_flags.h"

#include "plugin/flags.h"

namespace aoti {

CompileCacheOptions CompileCacheOptionsFromFlags() {
  return CompileCacheOptionsFor(
      FLAGS_aoti_compile_cache_dir, FLAGS_aoti_compile_cache_max_mb,
      RemoteCacheOptions{FLAGS_aoti_remote_cache, FLAGS_aoti_remote_instance_name, FLAGS_aoti_remote_cache_timeout_s});
}

}  // namespace aoti
