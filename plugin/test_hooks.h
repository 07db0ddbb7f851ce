// TestHooks: libraries linked into a harness test binary register gtest listeners and test
// registrars here (from a static initializer); the harness main installs and runs them after
// InitGoogleTest and flag parsing. This keeps the main free of a dependency on the reducer
// and on the generic test.
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

// RegisterTestRegistrar: a function that registers tests of its own (::testing::RegisterTest)
// once the flags are parsed, such as one check per dynamic shape. Returns true so it can
// initialize a static.
bool RegisterTestRegistrar(std::function<void()> registrar);

// RunTestRegistrars: the harness main calls them after flag parsing, before RUN_ALL_TESTS.
void RunTestRegistrars();

}  // namespace aoti
