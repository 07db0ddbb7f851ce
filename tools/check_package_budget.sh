#!/usr/bin/env bash
# check_package_budget.sh: the AOTI packages `bazel test //...` compiles, held to a written
# budget (tools/aoti_package_budget.txt). Each aoti_package that is not export_only is one
# AOTI compile of a whole program in every cold CI run (7-60 s of g++ on 2 cores), so a new
# one is a decision made in a commit: raise the budget beside it, saying why, or put the
# program in a bundle (testdata/corpus/bundles.bzl) or share an existing package.
#
# Usage: check_package_budget.sh        counts with `bazel query`; exits 1 when the count is not
#                                       the budget (over: growth; under: lower the budget) or
#                                       a package is read by no test
# Prints the count, the budget and, over it, the packages by Bazel package.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
cd "$AOTI_ROOT"
budget_file="$AOTI_ROOT/tools/aoti_package_budget.txt"
budget="$(grep -vE '^\s*(#|$)' "$budget_file" | head -1 | tr -d '[:space:]')"
if ! [[ "$budget" =~ ^[0-9]+$ ]]; then
  echo "check_package_budget: $budget_file: expected a whole number on its first line that is not a comment, got '$budget'" >&2
  exit 2
fi
# Every aoti_package under //... counts: one that no test reads is built by `bazel test
# //...` all the same (and is named below).
# The GPU's packages (tags = ["requires-gpu"]) are left out: .bazelrc keeps them out of
# builds and tests on a host without --config=cuda, so CI never compiles them.
compiled="$(bazel query 'attr(export_only, 0, kind("aoti_package rule", //...)) - attr(tags, requires-gpu, //...)' 2>/dev/null)" || {
  echo "check_package_budget: bazel query failed" >&2
  bazel query 'kind("aoti_package rule", //...)' >/dev/null
  exit 2
}
exported="$(bazel query 'attr(export_only, 1, kind("aoti_package rule", //...))' 2>/dev/null | grep -c . || true)"
count="$(grep -c . <<<"$compiled" || true)"
unread="$(bazel query "set($(tr '\n' ' ' <<<"$compiled")) - deps(tests(//...))" 2>/dev/null || true)"
gpu="$(bazel query 'attr(export_only, 0, kind("aoti_package rule", //...)) intersect attr(tags, requires-gpu, //...)' 2>/dev/null | grep -c . || true)"
echo "check_package_budget: $count AOTI-compiled packages in //... (budget $budget; besides them $exported export-only"
echo "  packages, which compile nothing, and $gpu for the GPU, built only with --config=cuda)"
rc=0
if [ -n "$unread" ]; then
  echo "check_package_budget: packaged, and read by no test (remove them, or test them):"
  sed 's/^/  /' <<<"$unread"
  rc=1
fi
if ((count > budget)); then
  echo "check_package_budget: over the budget by $((count - budget)); by Bazel package:"
  sed -E 's/:.*//' <<<"$compiled" | sort | uniq -c | sort -rn | sed 's/^/  /'
  echo "  bundle programs that prove the same construct (testdata/corpus/bundles.bzl), share a package"
  echo "  between tests, or raise $budget_file in the commit that needs it, saying why"
  rc=1
elif ((count < budget)); then
  echo "check_package_budget: $((budget - count)) under the budget: lower $budget_file to $count in this commit, so"
  echo "  that the room is not spent later without a decision"
  rc=1
fi
exit "$rc"
