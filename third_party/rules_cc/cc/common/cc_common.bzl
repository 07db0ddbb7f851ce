"""Offline stand-in for @rules_cc//cc/common:cc_common.bzl: Bazel's built-in cc_common."""

load(":native.bzl", "native_cc_common")

cc_common = native_cc_common
