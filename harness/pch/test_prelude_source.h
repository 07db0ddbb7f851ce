// The test prelude: the prelude (prelude_source.h) and what nearly every harness test's
// translation unit includes beside it, GoogleTest, gMock and gflags. gMock's headers alone
// cost a test file about as much to parse as ATen's. Precompiled as //harness/pch:test_pch
// and given to cc_test targets only (harness/cc.bzl): a library never sees these, so no
// symbol of the test layers can reach the core libraries (core_layer_test).
#include "harness/pch/prelude_source.h"

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
