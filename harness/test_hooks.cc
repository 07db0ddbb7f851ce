#include "harness/test_hooks.h"

namespace aoti {
namespace {

std::vector<ListenerFactory>& Factories() {
  static auto* factories = new std::vector<ListenerFactory>();
  return *factories;
}

}  // namespace

bool RegisterListenerFactory(ListenerFactory factory) {
  Factories().push_back(std::move(factory));
  return true;
}

void InstallRegisteredListeners() {
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  for (const auto& f : Factories()) {
    if (auto* l = f()) listeners.Append(l);
  }
}

}  // namespace aoti
