#include "plugin/test_hooks.h"

namespace aoti {
namespace {

std::vector<ListenerFactory>& Factories() {
  static auto* factories = new std::vector<ListenerFactory>();
  return *factories;
}

std::vector<std::function<void()>>& Registrars() {
  static auto* registrars = new std::vector<std::function<void()>>();
  return *registrars;
}

}  // namespace

bool RegisterTestRegistrar(std::function<void()> registrar) {
  Registrars().push_back(std::move(registrar));
  return true;
}

void RunTestRegistrars() {
  for (const auto& r : Registrars()) r();
}

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
