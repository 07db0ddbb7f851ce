// report_html_sample: writes the sample reduction's report.html (SampleReductionForReport)
// to the path given, for report_html_render_test.sh to open in a browser.
#include <iostream>

#include "harness/archive/tensor_bundle.h"
#include "reducer/report_html.h"
#include "reducer/report_html_sample.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: report_html_sample OUT.html WORK_DIR\n";
    return 2;
  }
  try {
    const aoti::ReduceResult r = aoti::SampleReductionForReport();
    aoti::ReduceSpec spec;
    spec.package = aoti::kSampleReportPackage;
    aoti::WriteTextFile(argv[1], aoti::ReportHtml(r, spec, "torch 2.13.0\nGPUs: none\n", r.message, argv[2]));
  } catch (const std::exception& e) {
    std::cerr << "report_html_sample: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
