// report.html's content: the graphs drawn by Graphviz (the culprit marked, the kept nodes
// of the original highlighted), the error profile (drift in one row shows in that row),
// the steps, everything escaped, nothing loaded from outside. Rendering in a browser is
// report_html_render_test's.
#include "reducer/report_html.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reducer/artifacts.h"
#include "reducer/error_profile.h"
#include "reducer/report_html_sample.h"

namespace aoti {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

std::string Html(const ReduceResult& r) {
  ReduceSpec spec;
  spec.package = kSampleReportPackage;
  return ReportHtml(r, spec, "torch 2.13.0\nGPUs: none\n", r.message, std::getenv("TEST_TMPDIR"));
}

TEST(ReportHtml, DrawsBothGraphsWithTheCulpritMarkedAndTheKeptNodesHighlighted) {
  const ReduceResult r = SampleReductionForReport();
  const std::string html = Html(r);
  ASSERT_THAT(html, Not(HasSubstr("No picture"))) << "is Graphviz installed? (tools/setup.sh installs it)";
  EXPECT_THAT(html, HasSubstr("<div class=\"graph\" id=\"minimal-graph\"><svg"));
  EXPECT_THAT(html, HasSubstr("<div class=\"graph\" id=\"original-graph\"><svg"));
  // dot writes the node's class beside its own: the culprit in both graphs.
  EXPECT_EQ(Count(html, "class=\"node culprit\""), 2u);
  EXPECT_THAT(html, HasSubstr("(culprit)"));
  EXPECT_THAT(html, HasSubstr("the culprit is <code id=\"culprit\">" + r.culprit + "</code>"));
  // Every node of the original is drawn (its id is the node's name), once per graph it is in.
  for (const auto& n : r.original.nodes) {
    EXPECT_EQ(Count(html, "id=\"node_" + n.name + "\""), n.name == r.culprit ? 2u : 1u) << n.name;
  }
}

TEST(ReportHtml, KeptNodesOtherThanTheCulpritAreHighlightedInTheOriginal) {
  ReduceResult r = SampleReductionForReport();
  r.culprit = r.culprit_path = "";  // no localizer named one: nothing is marked, the kept node is highlighted
  const std::string html = Html(r);
  EXPECT_EQ(Count(html, "class=\"node culprit\""), 0u);
  EXPECT_EQ(Count(html, "class=\"node kept\""), r.minimal.nodes.size());
  EXPECT_THAT(html, Not(HasSubstr("the culprit is")));
}

TEST(ReportHtml, IsSelfContainedAndEscapesWhatItQuotes) {
  const std::string html = Html(SampleReductionForReport());
  EXPECT_THAT(html, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=\"http")));
  EXPECT_THAT(html, Not(HasSubstr("<?xml")));  // dot's prolog is not inlined
}

TEST(ReportHtml, PlotsTheErrorOfTheOriginalAndOfTheRepro) {
  const std::string html = Html(SampleReductionForReport());
  EXPECT_EQ(Count(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"errplot\""), 2u);
  EXPECT_THAT(html, HasSubstr("the original: output 0 <code>relu</code> [8, 32]"));
  EXPECT_THAT(html, HasSubstr("compiled - float64 (largest |error| 1"));
  EXPECT_THAT(html, HasSubstr("eager - float64"));
  EXPECT_THAT(html, HasSubstr("each stem: the largest of 4"));  // 256 elements in 64 points
}

TEST(ReportHtml, ListsTheStepsWithTheirCompiles) {
  const ReduceResult r = SampleReductionForReport();
  const std::string html = Html(r);
  EXPECT_THAT(html, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"steps\""));
  EXPECT_THAT(html, HasSubstr("<td>localize_first</td><td>node &#39;" + r.culprit + "&#39; diverges on its own inputs</td><td>" +
                              std::to_string(r.nodes_before) + " &rarr; 1</td><td>1</td><td>30.0 s</td>"));
  EXPECT_THAT(html, HasSubstr("<td>final check</td>"));
}

TEST(ReportHtml, SaysSoWhenTheOriginalIsTooLargeToDraw) {
  ReduceResult r = SampleReductionForReport();
  while (r.original.nodes.size() <= kMaxOriginalNodesDrawn) r.original.nodes.push_back(r.original.nodes.back());
  EXPECT_THAT(Html(r), HasSubstr("too many to draw"));
}

// The repro's diagnosis.md, beside report.html: the reducer's culprit is its evidence.
TEST(Artifacts, TheDiagnosisNamesTheFirstDivergentNode) {
  const ReduceResult r = SampleReductionForReport();
  ReduceSpec spec;
  spec.package = kSampleReportPackage;
  const std::string out = std::string(std::getenv("TEST_TMPDIR")) + "/repro";
  WriteArtifacts(r, spec, ReduceOptions(), out);
  std::ifstream in(out + "/diagnosis.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(md, HasSubstr("(`accuracy_drift`)"));
  EXPECT_THAT(md, HasSubstr("the first divergent node: '" + r.culprit + "' (aten.relu.default)"));
  EXPECT_THAT(md, HasSubstr("python repro.py"));
  std::ifstream html(out + "/report.html");
  EXPECT_TRUE(html.good());
}

TEST(ErrorProfile, DriftInOneRowShowsInThatRowOnly) {
  const at::Tensor fp64 = at::zeros({8, 32}, at::kDouble);
  at::Tensor compiled = at::zeros({8, 32});
  compiled.select(0, 5).fill_(0.5);
  compiled[7][31] = std::nan("");
  const at::Tensor eager = at::full({8, 32}, 1e-7);
  const ErrorProfile p = MakeErrorProfile("the repro", "out", 0, compiled, eager, fp64, 64);
  ASSERT_EQ(p.compiled_error.size(), 64u);
  EXPECT_EQ(p.bucket, 4);
  for (size_t i = 0; i < 64; ++i) {
    if (i == 63) {
      EXPECT_TRUE(std::isnan(p.compiled_error[i]));  // NaN is the worst of its bucket
    } else {
      EXPECT_EQ(p.compiled_error[i], i / 8 == 5 ? 0.5 : 0.0) << i;
    }
    EXPECT_NEAR(p.eager_error[i], 1e-7, 1e-12);
  }
  EXPECT_EQ(p.max_compiled_error, 0.5);
  EXPECT_TRUE(p.against_fp64);
  const ErrorProfile no_fp64 = MakeErrorProfile("the repro", "out", 0, compiled, eager, at::Tensor());
  EXPECT_FALSE(no_fp64.against_fp64);
  EXPECT_EQ(no_fp64.bucket, 1);
  EXPECT_EQ(no_fp64.eager_error[0], 0.0);  // eager against itself
}

}  // namespace
}  // namespace aoti
