"""The harness's own C++ rules: rules_cc's, each translation unit given the precompiled header.

cc_library, cc_test and cc_binary here are rules_cc's with `-include harness/pch/prelude.h`
(and its stamp) added to copts and //harness/pch added to deps: gcc loads the headers that
most of the harness includes (ATen, nlohmann-json) from one precompiled file instead of
parsing them again in every translation unit (harness/pch/precompiled_header.bzl). A
cc_test gets test_prelude.h instead (//harness/pch:test_pch: the same, with GoogleTest,
gMock and gflags).
--define=aoti_pch=off makes the prelude an empty header. A target that links no libtorch
says precompiled_header = False: ATen's inline functions would leave it references to
libtorch's symbols (the torch-free harness/util loads rules_cc's rules itself). Targets a
model repository writes (aoti_model_test's srcs) are compiled as their repository has them,
without it.
"""

load("@rules_cc//cc:defs.bzl", _cc_binary = "cc_binary", _cc_library = "cc_library", _cc_test = "cc_test")

_PCH = Label("//harness/pch")

# The precompiled prelude first (gcc uses a precompiled header only before any other
# token), then its stamp: gcc's dependency file (-MD) leaves a precompiled header out, and
# Bazel's action cache would keep an object compiled against an older one; the stamp, a
# digest of the .gch that gcc does read as text, is listed, so that a new precompiled
# header recompiles what used the old one.
# harness/pch/BUILD.bazel names its outputs from these, so that the two cannot drift apart.
PRELUDE = "prelude.h"
PRELUDE_STAMP = "prelude_stamp.h"

# A test's translation units also include GoogleTest, gMock and gflags, which cost about as
# much to parse as ATen; libraries must not see them (core_layer_test), so tests have a
# prelude of their own.
TEST_PRELUDE = "test_prelude.h"
TEST_PRELUDE_STAMP = "test_prelude_stamp.h"
_TEST_PCH = Label("//harness/pch:test_pch")

def _with_prelude(kwargs, test = False):
    kwargs = dict(kwargs)
    if not kwargs.pop("precompiled_header", True):
        return kwargs
    prelude, stamp = (TEST_PRELUDE, TEST_PRELUDE_STAMP) if test else (PRELUDE, PRELUDE_STAMP)
    kwargs["copts"] = ["-include", "harness/pch/" + prelude, "-include", "harness/pch/" + stamp] + kwargs.get("copts", [])
    kwargs["deps"] = kwargs.get("deps", []) + [_TEST_PCH if test else _PCH]
    return kwargs

def cc_library(name, **kwargs):
    """rules_cc's cc_library, compiled with the harness's precompiled header.

    Args:
      name: the target's name.
      **kwargs: cc_library's attributes, and precompiled_header (default True; False for a
        target that links no libtorch).
    """
    _cc_library(name = name, **_with_prelude(kwargs))

def cc_test(name, **kwargs):
    """rules_cc's cc_test, compiled with the tests' precompiled header (the prelude, GoogleTest, gMock, gflags).

    Args:
      name: the target's name.
      **kwargs: cc_test's attributes, and precompiled_header (default True; False for a
        target that links no libtorch).
    """
    _cc_test(name = name, **_with_prelude(kwargs, test = True))

def cc_binary(name, **kwargs):
    """rules_cc's cc_binary, compiled with the harness's precompiled header.

    Args:
      name: the target's name.
      **kwargs: cc_binary's attributes, and precompiled_header (default True; False for a
        target that links no libtorch).
    """
    _cc_binary(name = name, **_with_prelude(kwargs))
