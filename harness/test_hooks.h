// TestHooks: libraries linked into a harness test binary register gtest listeners here
// (from a static initializer); the harness main installs them after InitGoogleTest and
// flag parsing. This keeps the main free of a dependency on the reducer.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace aoti {

using ListenerFactory = std::function<::testing::TestEventListener*()>;

// RegisterListenerFactory: returns true so it can initialize a static.
bool RegisterListenerFactory(ListenerFactory factory);

// InstallRegisteredListeners appends every registered listener (nullptr ones are skipped).
void InstallRegisteredListeners();

}  // namespace aoti
