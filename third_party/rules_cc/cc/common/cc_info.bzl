"""Offline stand-in for @rules_cc//cc/common:cc_info.bzl: Bazel's built-in CcInfo."""

load(":native.bzl", "NativeCcInfo")

CcInfo = NativeCcInfo
