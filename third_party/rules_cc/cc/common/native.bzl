"""Bazel's built-in C++ API, named so that cc_common.bzl and cc_info.bzl can re-export it."""

# The stand-in's one use of the globals that the real rules_cc replaces (Bazel 4.2.3 has no other).
native_cc_common = cc_common  # buildifier: disable=native-cc-common
NativeCcInfo = CcInfo  # buildifier: disable=native-cc-info
