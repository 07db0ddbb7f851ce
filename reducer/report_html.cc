#include "reducer/report_html.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "harness/util/errors.h"
#include "harness/util/strings.h"
#include "harness/util/subprocess.h"
#include "harness/archive/tensor_bundle.h"
#include "reducer/artifacts.h"
#include "reducer/graph_edit.h"

namespace aoti {
namespace {

namespace fs = std::filesystem;

std::string Escape(const std::string& s) { return MarkupEscape(s); }

// A Graphviz double-quoted string's contents.
std::string DotEscape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string Number(double v, const char* format = "%.4g") {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string Shape(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// The <svg ...>...</svg> element of dot's output, without its XML prolog and doctype.
std::string SvgElement(const std::string& document) {
  const size_t start = document.find("<svg");
  if (start == std::string::npos) return "";
  return document.substr(start);
}

// One panel of an error plot: stems from zero, one per point, on [-scale, scale].
void ErrorPanel(std::ostringstream& svg, double x0, double y0, double w, double h, const std::vector<double>& points,
                double scale, const std::string& colour, const std::string& title, const ErrorProfile& p) {
  svg << "<g class=\"panel\">";
  svg << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << w << "\" height=\"" << h
      << "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  const double mid = y0 + h / 2;
  // Faint lines between the rows of the output's last dimension, when there are few.
  if (p.sizes.size() >= 2 && p.numel > 0) {
    const int64_t row = p.sizes.back();
    const int64_t rows = row > 0 ? p.numel / row : 0;
    if (rows > 1 && rows <= 64) {
      for (int64_t r = 1; r < rows; ++r) {
        const double x = x0 + w * static_cast<double>(r * row) / static_cast<double>(p.numel);
        svg << "<line x1=\"" << x << "\" y1=\"" << y0 << "\" x2=\"" << x << "\" y2=\"" << y0 + h
            << "\" stroke=\"#e3e3e3\"/>";
      }
    }
  }
  svg << "<line x1=\"" << x0 << "\" y1=\"" << mid << "\" x2=\"" << x0 + w << "\" y2=\"" << mid
      << "\" stroke=\"#bbb\"/>";
  std::ostringstream path, bad;
  const size_t n = points.size();
  int non_finite = 0;
  for (size_t i = 0; i < n; ++i) {
    const double x = x0 + w * (static_cast<double>(i) + 0.5) / static_cast<double>(std::max<size_t>(1, n));
    const double v = points[i];
    if (!std::isfinite(v)) {
      ++non_finite;
      bad << "M" << Number(x, "%.2f") << " " << Number(y0 + 2, "%.2f") << "V" << Number(y0 + h - 2, "%.2f");
      continue;
    }
    if (v == 0 || scale <= 0) continue;
    const double y = mid - (h / 2 - 2) * std::max(-1.0, std::min(1.0, v / scale));
    path << "M" << Number(x, "%.2f") << " " << Number(mid, "%.2f") << "V" << Number(y, "%.2f");
  }
  if (!path.str().empty()) {
    svg << "<path d=\"" << path.str() << "\" stroke=\"" << colour << "\" stroke-width=\"1\" fill=\"none\"/>";
  }
  if (!bad.str().empty()) {
    svg << "<path d=\"" << bad.str() << "\" stroke=\"#7b1fa2\" stroke-width=\"1\" stroke-dasharray=\"2,2\"/>";
  }
  svg << "<text x=\"" << x0 << "\" y=\"" << y0 - 6 << "\" class=\"t\">" << Escape(title) << "</text>";
  svg << "<text x=\"" << x0 - 4 << "\" y=\"" << y0 + 10 << "\" class=\"a\" text-anchor=\"end\">" << Number(scale)
      << "</text>";
  svg << "<text x=\"" << x0 - 4 << "\" y=\"" << mid + 4 << "\" class=\"a\" text-anchor=\"end\">0</text>";
  svg << "<text x=\"" << x0 - 4 << "\" y=\"" << y0 + h << "\" class=\"a\" text-anchor=\"end\">" << Number(-scale)
      << "</text>";
  svg << "<text x=\"" << x0 << "\" y=\"" << y0 + h + 14 << "\" class=\"a\">0</text>";
  svg << "<text x=\"" << x0 + w << "\" y=\"" << y0 + h + 14 << "\" class=\"a\" text-anchor=\"end\">" << p.numel - 1
      << "</text>";
  svg << "<text x=\"" << x0 + w / 2 << "\" y=\"" << y0 + h + 14 << "\" class=\"a\" text-anchor=\"middle\">element"
      << (p.bucket > 1 ? " (each stem: the largest of " + std::to_string(p.bucket) + ")" : "") << "</text>";
  if (non_finite) {
    svg << "<text x=\"" << x0 + w << "\" y=\"" << y0 - 6 << "\" class=\"a\" text-anchor=\"end\" fill=\"#7b1fa2\">"
        << non_finite << " non-finite (dashed)</text>";
  }
  svg << "</g>";
}

std::string Table(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::ostringstream t;
  t << "<table class=\"kv\">";
  for (const auto& [k, v] : rows) t << "<tr><th>" << Escape(k) << "</th><td>" << Escape(v) << "</td></tr>";
  t << "</table>";
  return t.str();
}

}  // namespace

std::string GraphDot(const Program& program, const std::set<std::string>& kept, const std::string& culprit) {
  std::ostringstream dot;
  dot << "digraph repro {\n  rankdir=TB;\n  node [shape=box, fontname=monospace, fontsize=10];\n"
      << "  edge [fontname=monospace, fontsize=8, color=\"#777777\"];\n";
  std::map<std::string, std::string> producer;
  for (const auto& s : program.input_specs) {
    if (s.kind == InputKind::kUserInput) {
      dot << "  \"" << DotEscape(s.value_name) << "\" [shape=ellipse, style=filled, fillcolor=\"#e8eef7\"];\n";
      producer[s.value_name] = s.value_name;
    }
  }
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    const Node& n = program.nodes[i];
    const std::string id = "n" + std::to_string(i);
    const bool is_culprit = !culprit.empty() && n.name == culprit;
    dot << "  " << id << " [id=\"node_" << DotEscape(n.name) << "\", label=\"" << DotEscape(n.name) << "\\n"
        << DotEscape(ShortTarget(n.target)) << (is_culprit ? "\\n(culprit)" : "") << "\"";
    if (is_culprit) {
      dot << ", class=\"culprit\", style=\"filled,bold\", fillcolor=\"#ffcdd2\", color=\"#c62828\", penwidth=3";
    } else if (kept.count(n.name)) {
      dot << ", class=\"kept\", style=filled, fillcolor=\"#c8e6c9\", color=\"#2e7d32\"";
    }
    dot << "];\n";
    for (const auto& v : NodeInputNames(n)) {
      auto it = producer.find(v);
      if (it != producer.end()) {
        dot << "  \"" << DotEscape(it->second) << "\" -> " << id << " [label=\"" << DotEscape(v) << "\"];\n";
      }
    }
    for (const auto& v : NodeOutputNames(n)) producer[v] = id;
  }
  size_t k = 0;
  for (const auto& s : program.output_specs) {
    if (s.kind != OutputKind::kUserOutput || s.value_name.empty()) continue;
    auto it = producer.find(s.value_name);
    if (it == producer.end()) continue;
    dot << "  out" << k << " [shape=plaintext, label=\"output " << k << "\"];\n  " << DotEscape(it->second)
        << " -> out" << k << ";\n";
    ++k;
  }
  dot << "}\n";
  return dot.str();
}

std::string RenderSvg(const std::string& dot_source, const std::string& work_dir, double timeout_s,
                      std::string* problem) {
  std::string dot;
  try {
    dot = FindExecutable("dot");
  } catch (const HarnessError&) {
  }
  if (dot.empty()) {
    *problem = "Graphviz's dot is not on PATH (Debian: apt-get install graphviz)";
    return "";
  }
  static std::atomic<int> counter{0};
  const std::string base = work_dir + "/render_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string in = base + ".dot", out = base + ".svg", err = base + ".err";
  auto cleanup = [&] {
    std::error_code ec;
    fs::remove(in, ec);
    fs::remove(out, ec);
    fs::remove(err, ec);
  };
  try {
    WriteTextFile(in, dot_source);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) throw HarnessError("cannot write " + err);
    Subprocess::Options o;
    o.argv = {dot, "-Tsvg", "-o", out, in};
    o.env = ChildEnvironment({});
    o.stderr_fd = err_fd;
    int status = 0;
    bool ended = false;
    {
      Subprocess child(o);
      ::close(err_fd);
      ended = child.Wait(timeout_s, &status);
    }
    if (!ended) throw HarnessError("dot took over " + Number(timeout_s) + " s");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::string text = ReadTextFile(err);
      throw HarnessError("dot failed: " + text.substr(0, 500));
    }
    const std::string svg = SvgElement(ReadTextFile(out));
    if (svg.empty()) throw HarnessError("dot wrote no <svg> element");
    cleanup();
    return svg;
  } catch (const std::exception& e) {
    cleanup();
    *problem = e.what();
    return "";
  }
}

std::string ErrorPlotSvg(const ErrorProfile& p) {
  const double panel_w = 440, panel_h = 180, left = 70, top = 28, gap = 90;
  const double scale = std::max(p.max_compiled_error, p.max_eager_error);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"errplot\" viewBox=\"0 0 " << left + 2 * panel_w + gap + 20
      << " " << top + panel_h + 30 << "\" width=\"" << left + 2 * panel_w + gap + 20 << "\" height=\""
      << top + panel_h + 30 << "\">";
  const std::string ref = p.against_fp64 ? "float64" : "eager";
  ErrorPanel(svg, left, top, panel_w, panel_h, p.compiled_error, scale, "#c62828",
             "compiled - " + ref + " (largest |error| " + Number(p.max_compiled_error) + ")", p);
  ErrorPanel(svg, left + panel_w + gap, top, panel_w, panel_h, p.eager_error, scale, "#1565c0",
             (p.against_fp64 ? "eager - float64" : "eager - eager") + std::string(" (largest |error| ") +
                 Number(p.max_eager_error) + ")",
             p);
  svg << "</svg>";
  return svg.str();
}

std::string StepsSvg(const ReduceResult& r) {
  struct Point {
    int compiles;
    size_t nodes;
  };
  std::vector<Point> points = {{0, r.nodes_before}};
  for (const auto& e : r.log) points.push_back({e.compiles, e.nodes_after});
  points.push_back({r.compiles, r.nodes_after});
  const double w = 460, h = 160, left = 60, top = 16;
  const int max_c = std::max(1, r.compiles);
  const double max_log = std::log10(static_cast<double>(std::max<size_t>(2, r.nodes_before)));
  auto X = [&](int c) { return left + w * c / max_c; };
  auto Y = [&](size_t n) { return top + h - h * std::log10(static_cast<double>(std::max<size_t>(1, n))) / max_log; };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"steps\" viewBox=\"0 0 " << left + w + 30 << " "
      << top + h + 36 << "\" width=\"" << left + w + 30 << "\" height=\"" << top + h + 36 << "\">";
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << w << "\" height=\"" << h
      << "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  std::ostringstream path;
  for (size_t i = 0; i < points.size(); ++i) {
    path << (i ? "H" : "M") << Number(X(points[i].compiles), "%.1f") << (i ? "" : " " + Number(Y(points[i].nodes), "%.1f"));
    if (i) path << "V" << Number(Y(points[i].nodes), "%.1f");
  }
  svg << "<path d=\"" << path.str() << "\" stroke=\"#2e7d32\" stroke-width=\"2\" fill=\"none\"/>";
  for (const auto& pt : points) {
    svg << "<circle cx=\"" << Number(X(pt.compiles), "%.1f") << "\" cy=\"" << Number(Y(pt.nodes), "%.1f")
        << "\" r=\"3\" fill=\"#2e7d32\"/>";
  }
  svg << "<text x=\"" << left - 4 << "\" y=\"" << top + 10 << "\" class=\"a\" text-anchor=\"end\">" << r.nodes_before
      << "</text><text x=\"" << left - 4 << "\" y=\"" << top + h << "\" class=\"a\" text-anchor=\"end\">1</text>"
      << "<text x=\"" << left << "\" y=\"" << top + h + 14 << "\" class=\"a\">0</text><text x=\"" << left + w << "\" y=\""
      << top + h + 14 << "\" class=\"a\" text-anchor=\"end\">" << r.compiles << "</text><text x=\"" << left + w / 2
      << "\" y=\"" << top + h + 14 << "\" class=\"a\" text-anchor=\"middle\">compiles</text><text x=\"12\" y=\""
      << top + h / 2 << "\" class=\"a\" transform=\"rotate(-90 12 " << top + h / 2
      << ")\" text-anchor=\"middle\">nodes (log)</text>";
  svg << "</svg>";
  return svg.str();
}

namespace {

constexpr const char kReportStyle[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}\n"
    "h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}\n"
    "pre{background:#f5f5f5;padding:10px;overflow:auto;font-size:12px;max-height:360px}\n"
    ".badge{display:inline-block;padding:2px 10px;border-radius:10px;background:#c62828;color:#fff;font-weight:600}\n"
    ".lead{font-size:15px}.graph{overflow:auto;max-height:720px;border:1px solid #eee;padding:6px}\n"
    ".graph svg{max-width:100%;height:auto}.note{color:#666;font-size:13px}\n"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}\n"
    "th{background:#f5f5f5}.kv th{width:280px}svg text.t{font-size:12px;fill:#222}svg text.a{font-size:10px;fill:#555}\n"
    ".legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle;border:1px solid #666}\n";

// The page's head and its opening lines: what was reduced, to what, and how to run it.
void HeadAndLead(const ReduceResult& r, const ReduceSpec& spec, std::ostringstream& h) {
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
    << "<title>AOTI repro of " << Escape(ShownPackage(r, spec)) << ": " << Escape(r.failure_class) << ", "
    << r.nodes_before << " to " << r.nodes_after << " nodes</title>\n<style>\n" << kReportStyle << "</style></head><body>\n";
  h << "<h1>AOTI repro: <span class=\"badge\" id=\"failure-class\">" << Escape(r.failure_class) << "</span></h1>\n"
    << "<p class=\"lead\">Reduced <code>" << Escape(ShownPackage(r, spec)) << "</code> from <b>" << r.nodes_before
    << "</b> to <b>" << r.nodes_after << "</b> nodes in <b>" << r.compiles << "</b> compiles ("
    << Number(r.seconds, "%.0f") << " s)"
    << (r.culprit.empty() ? "." : "; the culprit is <code id=\"culprit\">" + Escape(r.culprit_path) + "</code>.")
    << (r.budget_exhausted ? " <b>The time budget was spent: this is the best repro so far.</b>" : "") << "</p>\n"
    << "<p class=\"note\">Run it: <code>python repro.py</code> (exit 1 while the bug is there), or copy "
    << "<code>BUILD.bazel</code>, <code>repro_test.cc</code> and <code>repro.pt2</code> into a package and "
    << "<code>bazel test :repro_test</code>.</p>\n";
}

void MinimalGraphAndErrors(const ReduceResult& r, const std::string& work_dir, std::ostringstream& h) {
  std::string problem;
  const std::string minimal_svg = RenderSvg(GraphDot(r.minimal, {}, r.culprit), work_dir, 60, &problem);
  h << "<h2>Minimal graph</h2>\n";
  if (!minimal_svg.empty()) {
    h << "<div class=\"graph\" id=\"minimal-graph\">" << minimal_svg << "</div>\n"
      << "<p class=\"legend note\"><span style=\"background:#ffcdd2;border-color:#c62828\"></span>the culprit"
      << "<span style=\"background:#e8eef7\"></span>an input</p>\n";
  } else {
    h << "<p class=\"note\">No picture: " << Escape(problem) << ". The graph is in <code>graph.dot</code>.</p>\n";
  }
  h << "<pre>" << Escape(FormatGraph(r.minimal)) << "</pre>\n";
  if (r.error_profiles.empty()) return;
  h << "<h2>Error per element</h2>\n<p class=\"note\">Each failing output's error against the float64 reference, "
       "element by element in row-major order: the compiled model's (red) next to eager's (blue), on one scale. "
       "Drift everywhere, in one channel or in the tail shows as such.</p>\n";
  for (const auto& p : r.error_profiles) {
    h << "<h3>" << Escape(p.where) << ": output " << p.output_index << " <code>" << Escape(p.output) << "</code> "
      << Escape(Shape(p.sizes)) << "</h3>\n<div class=\"plot\">" << ErrorPlotSvg(p) << "</div>\n";
  }
}

void StepsTable(const ReduceResult& r, std::ostringstream& h) {
  h << "<h2>Steps</h2>\n<div>" << StepsSvg(r) << "</div>\n"
    << "<table id=\"steps\"><tr><th>step</th><th>strategy</th><th>what</th><th>nodes</th><th>compiles so far</th>"
       "<th>time</th></tr>\n";
  for (size_t i = 0; i < r.log.size(); ++i) {
    const auto& e = r.log[i];
    h << "<tr><td>" << i + 1 << "</td><td>" << Escape(e.strategy) << "</td><td>" << Escape(e.what) << "</td><td>"
      << e.nodes_before << " &rarr; " << e.nodes_after << "</td><td>" << e.compiles << "</td><td>"
      << Number(e.seconds, "%.1f") << " s</td></tr>\n";
  }
  h << "<tr><td></td><td>final check</td><td>the repro, compiled and run again</td><td>" << r.nodes_after
    << "</td><td>" << r.compiles << "</td><td>" << Number(r.seconds, "%.1f") << " s</td></tr></table>\n";
}

void StageAndWorkaround(const StageReport& st, std::ostringstream& h) {
  if (!st.ran) return;
  h << "<h2>Stage and workaround</h2>\n<p id=\"stage\"><b>" << Escape(st.stage) << "</b>: " << Escape(st.stage_reason)
    << ".</p>\n<table id=\"ladder\"><tr><th>rung</th><th>what</th><th>the repro</th><th>time</th></tr>\n";
  for (const auto& rung : st.rungs) {
    h << "<tr><td>" << Escape(rung.name) << "</td><td>" << Escape(rung.what) << "</td><td>" << Escape(rung.verdict)
      << "</td><td>" << Number(rung.seconds, "%.1f") << " s</td></tr>\n";
  }
  h << "</table>\n<p class=\"note\">" << st.ladder_compiles << " compile(s) of the repro (budget " << st.ladder_budget
    << "), " << st.workaround_compiles << " of the original (budget " << st.workaround_budget << ").</p>\n";
  if (st.workaround_verified) {
    h << "<p id=\"workaround\">Workaround, verified on the original: <b>" << Escape(st.workaround_what)
      << "</b>. The model's inductor configs with it (the exact <code>aoti_package</code> line and the Python form: "
         "<code>workaround.md</code>):</p>\n<pre>"
      << Escape(st.merged_configs_json) << "</pre>\n";
  } else {
    h << "<p id=\"workaround\">No workaround verified: " << Escape(st.workaround_verdict) << ".</p>\n";
  }
}

void OriginalGraph(const ReduceResult& r, const std::string& work_dir, std::ostringstream& h) {
  h << "<h2>Original graph</h2>\n";
  if (r.original.nodes.size() > kMaxOriginalNodesDrawn) {
    h << "<p class=\"note\">" << r.nodes_before << " nodes: too many to draw (over " << kMaxOriginalNodesDrawn
      << ").</p>\n";
    return;
  }
  std::set<std::string> kept;
  for (const auto& n : r.minimal.nodes) kept.insert(n.name);
  std::string problem;
  const std::string svg = RenderSvg(GraphDot(r.original, kept, r.culprit), work_dir, 120, &problem);
  if (svg.empty()) {
    h << "<p class=\"note\">No picture: " << Escape(problem) << ".</p>\n";
    return;
  }
  h << "<p class=\"note\">" << r.nodes_before << " nodes; the " << r.nodes_after
    << " kept in the repro are highlighted, the culprit in red.</p>\n<div class=\"graph\" id=\"original-graph\">" << svg
    << "</div>\n";
}

}  // namespace

std::string ReportHtml(const ReduceResult& r, const ReduceSpec& spec, const std::string& environment,
                       const std::string& message, const std::string& work_dir) {
  std::ostringstream h;
  HeadAndLead(r, spec, h);
  h << "<h2>Failure</h2>\n<pre id=\"failure\">" << Escape(message) << "</pre>\n";
  MinimalGraphAndErrors(r, work_dir, h);
  StepsTable(r, h);
  StageAndWorkaround(r.stage, h);
  OriginalGraph(r, work_dir, h);
  h << "<h2>Figures</h2>\n"
    << Table({{"nodes before", std::to_string(r.nodes_before)},
              {"nodes after", std::to_string(r.nodes_after)},
              {"compiles", std::to_string(r.compiles)},
              {"compiles served by the disk cache", std::to_string(r.disk_cache_hits)},
              {"of them, from the remote cache", r.remote_cache.empty() ? "no remote cache"
                                                                        : std::to_string(r.remote_cache_hits)},
              {"compile servers", std::to_string(r.jobs)},
              {"runs", std::to_string(r.runs)},
              {"wall time", Number(r.seconds, "%.1f") + " s"},
              {"compile time", Number(r.compile_seconds, "%.1f") + " s"},
              {"flaky candidates rejected", std::to_string(r.flaky)},
              {"final result failed again on re-check", RecheckText(r)},
              {"time budget spent", BudgetText(r)}})
    << "\n<h2>Environment</h2>\n<pre id=\"environment\">" << Escape(environment) << "</pre>\n</body></html>\n";
  return h.str();
}

}  // namespace aoti
