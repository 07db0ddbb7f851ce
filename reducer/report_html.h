// report.html: the reduction as one self-contained page a person opens (no script, no
// network: a Content-Security-Policy forbids every outside load), next to report.md.
// It holds
//   - the failure, as the final check saw it;
//   - the minimal graph as a picture (graph.dot rendered by Graphviz's dot to SVG, the
//     culprit node marked), and the original graph with the kept nodes highlighted when
//     it has at most kMaxOriginalNodesDrawn nodes;
//   - for accuracy failures, the error of the failing output element by element (compiled
//     minus float64 next to eager minus float64; ErrorProfile), in the original and in
//     the repro;
//   - the steps: nodes over compiles, as a chart and a table;
//   - the figures and the environment.
// Without Graphviz the page says so and shows the graphs as text.
#pragma once

#include <set>
#include <string>

#include "harness/program/program.h"
#include "reducer/reducer.h"

namespace aoti {

constexpr size_t kMaxOriginalNodesDrawn = 400;

// GraphDot: the program as a Graphviz digraph: user inputs as ellipses, one box per node
// (name and operator), edges labelled with the values they carry; the nodes named in
// `kept` filled, the `culprit` node marked (red, bold, "culprit" in its label).
std::string GraphDot(const Program& program, const std::set<std::string>& kept, const std::string& culprit);

// RenderSvg: dot's SVG of a Graphviz source (the <svg> element alone, ready to inline);
// "" with `problem` set when dot is not installed, fails, or takes over timeout_s.
std::string RenderSvg(const std::string& dot_source, const std::string& work_dir, double timeout_s,
                      std::string* problem);

// ErrorPlotSvg: one profile as an SVG of two panels side by side, compiled's error and
// eager's, on one shared scale.
std::string ErrorPlotSvg(const ErrorProfile& profile);

// StepsSvg: nodes (log scale) over compiles, one point per accepted step.
std::string StepsSvg(const ReduceResult& result);

// ReportHtml: the whole page. `environment` is EnvironmentHeader's text; `message` the
// failure as shown in report.md; `work_dir` where dot may write its temporary files.
std::string ReportHtml(const ReduceResult& result, const ReduceSpec& spec, const std::string& environment,
                       const std::string& message, const std::string& work_dir);

}  // namespace aoti
