// CaseFile: a failing case directory's case.json: what failed, on which package and inputs,
// under which check options. One writer (CaseFileToJson: the harness when a check fails,
// the reducer for its repro) and one parser (ParseCaseFile: aoti_reduce --case_dir,
// --aoti_check_options), so the options a test chose travel whole.
//
//   {"format": "aoti_harness.case/2", "test": "Suite.Test", "package": "original.pt2",
//    "failure_class": "accuracy", "message": "...", "check_str": "",
//    "inductor_configs": {...}, "inputs": "inputs", "device": "cpu",
//    "check_options": {"model": ..., "accuracy": {...}, "runner": {...}, ...}}
//
// Paths (the package, the inputs, the op libraries) are relative to the case directory
// where they lie inside it, so the directory can be uploaded and reduced elsewhere.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check/check_options.h"

namespace aoti {

struct CaseFile {
  std::string test;                    // Suite.Test, when a test wrote it
  std::string package;                 // the failing .pt2 (ParseCaseFile: absolute, or joined to the case dir)
  std::string failure_class;
  std::string message;
  std::string check_str;               // the failure message must contain it ("" none)
  std::string inductor_configs_json = "{}";
  std::string inputs_dir;              // a tensor bundle ("" the package's sample inputs)
  std::string device = "cpu";          // where the inputs were
  CheckOptions options;
};

// CaseFileToJson: case.json's object; paths under `case_dir` are written relative to it.
nlohmann::json CaseFileToJson(const CaseFile& c, const std::string& case_dir);

// ParseCaseFile: `text` is case.json of the directory `case_dir`. Throws HarnessError
// naming case.json and the field for malformed JSON, a field of the wrong type, an
// unknown accuracy mode, a negative or non-finite tolerance, or a missing package.
// Format aoti_harness.case/1 (an older harness: the accuracy mode and tolerance only) is
// read too.
CaseFile ParseCaseFile(const std::string& text, const std::string& case_dir);

// PathsOutsideCaseDir: the case's paths (its package, inputs and op libraries) that lead
// out of `case_dir`, symbolic links followed, each as "what: path". A file directly beside
// it is inside when the directory beside is itself a case (it holds case.json): a repro
// directory names the test's case's ../original.pt2. A case directory is code (its op
// libraries are loaded, its .pt2 holds a shared object): aoti_reduce refuses a case that
// points elsewhere on the machine.
std::vector<std::string> PathsOutsideCaseDir(const CaseFile& c, const std::string& case_dir);

// CopyOpLibraries: copies each library into `dir`/op_libraries/ (a case, a repro: they
// travel with it) and returns the copies' paths. A library that cannot be copied is kept
// by its own path, with a warning.
std::vector<std::string> CopyOpLibraries(const std::vector<std::string>& libraries, const std::string& dir);

}  // namespace aoti
