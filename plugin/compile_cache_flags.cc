#include "plugin/compile_cache_flags.h"

#include "plugin/flags.h"

namespace aoti {

CompileCacheOptions CompileCacheOptionsFromFlags() {
  return CompileCacheOptionsFor(
      FLAGS_aoti_compile_cache_dir, FLAGS_aoti_compile_cache_max_mb,
      RemoteCacheOptions{FLAGS_aoti_remote_cache,
                         FLAGS_aoti_remote_instance_name,
                         FLAGS_aoti_remote_cache_timeout_s,
                         FLAGS_aoti_remote_cache_upload,
                         FLAGS_aoti_remote_cache_ca_cert,
                         FLAGS_aoti_remote_cache_client_cert,
                         FLAGS_aoti_remote_cache_client_key,
                         FLAGS_aoti_remote_cache_header_file,
                         FLAGS_aoti_remote_cache_failure_ttl_h * 3600});
}

}  // namespace aoti
