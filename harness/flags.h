// Flags shared by harness test binaries; defined in model_test_main.cc.
#pragma once

#include <gflags/gflags.h>

DECLARE_string(aoti_package);
DECLARE_string(aoti_model_name);
