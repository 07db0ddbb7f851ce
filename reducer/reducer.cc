#include "reducer/reducer.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "reducer/value_store.h"

#include <torch/headeronly/version.h>

#include "harness/check/check.h"
#include "harness/util/failure_class.h"
#include "harness/runner/compiled_runner.h"
#include "harness/program/interpreter.h"
#include "harness/runner/op_libraries.h"
#include "harness/archive/pt2_archive.h"
#include "reducer/error_profile.h"
#include "reducer/graph_edit.h"
#include "reducer/lift_control_flow.h"
#include "reducer/oracle.h"
#include "reducer/strategies/strategy.h"

namespace aoti {
namespace {

// The words for a shipped package whose failure a fresh compile does not show.
std::string NotReproducedMessage(const Pt2Archive& archive, const std::string& failure_class, const std::string& now,
                                 const std::string& configs_json) {
  const PackageManifest& m = *archive.Manifest();
  return "the shipped package " + m.prebuilt->package + " fails as " + failure_class +
         ", and a fresh compile of its whole program here (torch " + TORCH_VERSION + ", inductor_configs " +
         configs_json + ") does not: " + now +
         ". The shipped artifact was built by another torch or with other inductor configs than these, so a "
         "reduction here would chase a failure this compiler does not make; nothing was reduced. Give "
         "aoti_prebuilt_package the inductor_configs the pipeline compiled with (its aoti_compile_and_package "
         "call), or rebuild the shipped package with this torch; the shipped package's failure stands as its "
         "test reported it.";
}

}  // namespace

std::string RecheckText(const ReduceResult& r) {
  if (!r.final_rechecked) return "not re-run: out of time";
  return r.final_recheck_failed_again ? "yes" : "NO (flaky)";
}

CompileServerOptions ServerForCase(CompileServerOptions base, const CheckOptions& check, const ReduceOptions& options,
                                   const std::string& out_dir) {
  base.op_libraries = check.runner.op_libraries;
  base.pytree_modules = check.runner.pytree_modules;
  base.env_pass_through = check.runner.env_pass_through;
  base.precompiled_headers_dir = PrecompiledHeadersDir(options.compile_cache);
  base.log_path = out_dir + "/compile_server.log";
  return base;
}

CompileCacheOptions WithRemoteClient(CompileCacheOptions options, const CompileServerOptions& server) {
  if (options.remote.python.empty()) options.remote.python = server.python;
  if (options.remote.script.empty() && !server.server_script.empty()) {
    options.remote.script =
        (std::filesystem::path(server.server_script).parent_path() / "remote_compile_cache.py").string();
  }
  return options;
}

std::string ShownPackage(const ReduceResult& r, const ReduceSpec& spec) {
  return !r.package_name.empty() ? r.package_name : std::filesystem::path(spec.package).filename().string();
}

std::string BudgetText(const ReduceResult& r) {
  if (!r.sanity_checked) {
    return "yes, during the sanity check: the repro is the original as the test saw it fail, not reduced";
  }
  return r.budget_exhausted ? "yes: best result so far" : "no";
}

namespace {

using Progress = std::function<void(const std::string&)>;

// The reduction's working set, shared by its phases below.
struct Reduction {
  const ReduceSpec& spec;
  const ReduceOptions& options;
  const Progress& progress;
  const Pt2Archive& archive;
  const std::vector<at::Tensor>& inputs;
  const CheckOptions& check;  // the test's own, before the oracle's hang timeout
  Oracle& oracle;
  ReduceResult& result;
  // The package as built, checked once (no compile) when the failure class is not given.
  std::optional<ErrorProfile> original_profile;
  bool profiled_original = false;
  double original_run_seconds = -1;  // its compiled run to the end (the workaround's cost)
};

// WithBudget: the options with one deadline for every compile and run: the process' or
// the time budget's, whichever comes first.
ReduceOptions WithBudget(const ReduceOptions& given, Deadline::Clock::time_point start) {
  ReduceOptions options = given;
  if (options.time_budget_s <= 0) return options;
  const auto budget_end =
      start + std::chrono::duration_cast<Deadline::Clock::duration>(std::chrono::duration<double>(options.time_budget_s));
  if (!options.deadline.set() || options.deadline.SecondsLeft() > options.time_budget_s) {
    options.deadline = Deadline(budget_end, "the reduction's time budget of " +
                                                std::to_string(static_cast<int>(options.time_budget_s + 0.5)) + " s");
  }
  return options;
}

void RequireCompilerFailure(const std::string& failure_class) {
  // "" is whatever the original does, found by the sanity check and required then.
  if (Is(failure_class, FailureClass::kPasses) || IsCompilerFailure(failure_class)) return;
  if (Is(failure_class, FailureClass::kPreflight) || Is(failure_class, FailureClass::kHarnessError) ||
      Is(failure_class, FailureClass::kExportError)) {
    throw HarnessError("a " + failure_class + " failure is about the inputs or the package, not the program; "
                       "there is nothing to reduce (fix what the message names)");
  }
  throw HarnessError("a " + failure_class + " verdict says no rule could judge the original, so there is no "
                     "failure of the compiler to reduce (the check's message says what to do)");
}

// RecordEagerValues: every value of `program`, from one eager run on the values the store
// holds for its user inputs: a subgraph's by its address as a name (AddressAsName:
// cond_true_graph_0_relu; a loop body's, its first iteration's). Values already stored stay.
// The program's observed_symbols and observed_control_flow become what the run bound and
// did (the data-dependent sizes; each higher-order op's branch or iterations); returns the
// latter.
// The run stops at `deadline` (RunStopped, a HarnessError), as a check's eager run does.
std::map<std::string, ControlFlowTaken> RecordEagerValues(const Pt2Archive& archive, const std::string& model,
                                                          Program* program, ValueStore* values, Deadline deadline) {
  InterpreterOptions o;
  o.deadline = std::move(deadline);
  Interpreter eager(*program, LoadProgramState(archive, model), o);
  std::vector<at::Tensor> inputs;
  for (const auto& name : UserInputNames(*program)) inputs.push_back(values->Get(name));
  RunOptions keep;
  keep.observer = [&](const Node&, const std::string& address, const c10::IValue& v) {
    // A subgraph's value by its address as a name (what a candidate that passes it in calls it).
    const std::string name = AddressAsName(address);
    if (v.isTensor() && !values->Has(name)) values->Put(name, v.toTensor());
  };
  RunResult run = eager.Run(inputs, keep);
  program->observed_symbols = run.symbols;
  program->observed_control_flow = run.control_flow;
  return run.control_flow;
}

// StartPool: `jobs - 1` more servers like the given one, started now (Warm) beside the
// sanity check, handed to the oracle.
std::vector<std::unique_ptr<CompileClient>> StartPool(CompileClient* client, int jobs, Oracle* oracle,
                                                      const Progress& progress) {
  std::vector<std::unique_ptr<CompileClient>> servers;
  std::vector<CompileClient*> pool;
  for (int j = 1; j < jobs; ++j) {
    CompileServerOptions o = client->options();
    if (!o.log_path.empty()) o.log_path += "." + std::to_string(j);
    servers.push_back(std::make_unique<CompileClient>(o));
    servers.back()->Warm();
    pool.push_back(servers.back().get());
  }
  oracle->UsePool(pool);
  if (jobs > 1) progress("compile servers: " + std::to_string(jobs) + " (--jobs)");
  return servers;
}

// CheckAsBuilt: the failure class, when not given: the package as built says it with no
// compile (its compiled model's run, or the compile error its manifest records), so that
// the sanity check can be a strategy's diagnosis. Not with configs other than the package's.
void CheckAsBuilt(Reduction& x) {
  if (!x.spec.failure_class.empty() || !x.spec.inductor_configs_json.empty()) return;
  CheckOptions as_built = x.check;
  as_built.keep_values = true;
  const CheckReport r = CheckAotiMatchesEager(x.spec.package, &x.inputs, as_built);
  x.original_profile = ProfileFirstFailure("the original", r, x.result.original.Signature().user_outputs);
  x.profiled_original = true;
  if (r.outcome.ok()) x.original_run_seconds = r.outcome.seconds;
  if (!r.pass && !Is(r.failure_class, FailureClass::kPreflight) && !Is(r.failure_class, FailureClass::kHarnessError)) {
    x.oracle.SetTarget(r.failure_class, x.options.check_str);
    x.oracle.NoteOriginalFailure(r.message);
    x.progress("the package as built fails as " + r.failure_class + " (its own compiled model, no compile)");
    if (r.flaky) x.oracle.SetVotes(std::max(x.oracle.check().votes, VotesFor(r.runs_failed, r.runs)));
  } else if (r.pass) {
    x.progress("the package as built passes; the sanity check finds the failure to reduce");
  }
}

// SayHowCandidatesAreJudged: a hang's shorter timeout and a flaky failure's vote.
void SayHowCandidatesAreJudged(const Reduction& x) {
  const Oracle& oracle = x.oracle;
  if (Is(oracle.target_class(), FailureClass::kTimeout) && oracle.check().runner.timeout_s < x.check.runner.timeout_s) {
    x.progress("a hang: a candidate's compiled run counts as hanging once it runs " +
               std::to_string(static_cast<int>(oracle.check().runner.timeout_s)) + " s (the test's own timeout: " +
               std::to_string(static_cast<int>(x.check.runner.timeout_s)) + " s; --aoti_reduce_hang_timeout_s)");
  }
  if (oracle.check().votes > 1) {
    x.progress("the failure is flaky: each candidate is judged by a vote of " + std::to_string(oracle.check().votes) +
               " runs of its compiled model (it fails when any of them fails)");
  }
}

// StrategyOrder: the strategies by name, in the order given; all of them when none is.
std::vector<const StrategyInfo*> StrategyOrder(const std::vector<std::string>& names) {
  std::vector<const StrategyInfo*> order;
  if (names.empty()) {
    for (const auto& s : Strategies()) order.push_back(&s);
    return order;
  }
  for (const auto& name : names) {
    const StrategyInfo* s = FindStrategy(name);
    if (!s) {
      std::string known;
      for (const auto& k : Strategies()) known += std::string(known.empty() ? "" : ", ") + k.name;
      throw HarnessError("unknown strategy '" + name + "'; known: " + known);
    }
    order.push_back(s);
  }
  return order;
}

// LiftForReduction: the start program with its control flow lifted (LiftControlFlow: the
// branches taken, the loops' first iterations), its values recorded; nullopt when it has
// no control flow, when nothing could be lifted, or when the sanity check is skipped (the
// lifted form is kept only once a compile shows it fails the same way).
std::optional<Program> LiftForReduction(Reduction& x, const Program& start, const std::map<std::string, ControlFlowTaken>& taken,
                                        ValueStore* values) {
  if (!HasControlFlow(start) || !x.options.lift_control_flow ||
      (x.options.skip_sanity && !x.spec.failure_class.empty())) {
    return std::nullopt;
  }
  LiftedProgram lifted = LiftControlFlow(start, taken);
  for (const auto& k : lifted.kept) x.progress("lift_control_flow: kept as it is: " + k);
  if (lifted.lifted.empty()) return std::nullopt;
  for (const auto& l : lifted.lifted) x.progress("lift_control_flow: lifted " + l);
  Program program = RemoveUnusedInputs(EliminateDeadCode(lifted.program));
  try {
    RecordEagerValues(x.archive, x.result.model, &program, values, OneRunDeadline(x.check.runner));
  } catch (const HarnessError& e) {
    x.progress(std::string("lift_control_flow: the lifted program does not run in the interpreter (") + e.what() +
               "); reducing with the control flow kept");
    return std::nullopt;
  }
  return program;
}

// SanityCheckLifted: the sanity check made on the lifted program (its diagnostic compile
// where a strategy diagnoses this failure). True when it fails the same way: the reduction
// goes on from it. Else the original's control flow stays, and the plain sanity check runs.
bool SanityCheckLifted(Reduction& x, ReductionState& state, const std::vector<const StrategyInfo*>& order,
                       const Program& start_program, const Program& lifted) {
  Oracle& oracle = x.oracle;
  if (oracle.target_class().empty()) return false;  // the failure to keep is not known yet
  x.progress("sanity: compiling and running the original with its control flow lifted (" +
             std::to_string(CountNodes(lifted.nodes)) + " nodes lifted; the original has " +
             std::to_string(CountNodes(start_program.nodes)) + ")");
  state.SetCurrent(lifted);
  std::optional<Verdict> diagnosed;
  for (const auto* s : order) {
    if (s->diagnose && (diagnosed = s->diagnose(state))) break;
  }
  const Verdict v = diagnosed ? *diagnosed : oracle.Test(lifted);
  state.SetCurrent(start_program);
  if (!v.fails) {
    x.progress("  the lifted program does not fail the same way (" +
               (v.failure_class.empty() ? std::string("it passes") : v.not_failing_reason.substr(0, 200)) +
               "); the control flow stays, and the original is compiled as it is");
    return false;
  }
  state.Step("sanity", std::to_string(CountNodes(start_program.nodes)) + " nodes",
             "the original fails as " + oracle.target_class() + " (seen with its control flow lifted)");
  state.Replace(lifted, "lift_control_flow", "the control flow lifted (the branches taken, the loops' first iterations) "
                                             "fails the same way");
  return true;
}

// SanityCheck: the original fails as the test saw it. Where a strategy diagnoses this
// failure (or a failure not known yet), its diagnostic compile is the sanity check's; the
// plain one is made only when the diagnosis does not show the failure.
void SanityCheck(Reduction& x, ReductionState& state, const std::vector<const StrategyInfo*>& order,
                 const Program& start_program) {
  if (x.options.skip_sanity && !x.spec.failure_class.empty()) return;
  Oracle& oracle = x.oracle;
  x.progress("sanity: compiling and running the original (" + std::to_string(CountNodes(start_program.nodes)) + " nodes)");
  std::optional<Verdict> diagnosed;
  for (const auto* s : order) {
    if (!s->diagnose || !(diagnosed = s->diagnose(state))) continue;
    if (!diagnosed->fails && (!oracle.target_class().empty() || diagnosed->failure_class.empty())) {
      x.progress("  " + std::string(s->name) + "'s diagnostic compile does not show the failure (" +
                 diagnosed->not_failing_reason.substr(0, 200) + "); compiling the original as it is");
      diagnosed.reset();
    }
    break;
  }
  const Verdict v = diagnosed ? *diagnosed : oracle.Test(start_program);
  if (!v.fails && !x.spec.failure_class.empty() && state.OutOfTime()) {
    // The test saw the original fail; the time ran out before the sanity check could see it
    // again. The best so far is the original itself, labelled as not checked again.
    x.result.sanity_checked = false;
    x.progress("the time ran out during the sanity check (" + v.not_failing_reason.substr(0, 200) +
               "); the repro is the original, not reduced and not checked again");
  } else if (x.spec.failure_class.empty()) {
    if (v.failure_class.empty()) throw HarnessError(x.spec.package + ": the original passes; there is nothing to reduce");
    oracle.SetTarget(v.failure_class, x.options.check_str);
  } else if (!v.fails) {
    const std::string now = v.failure_class.empty() ? std::string("it passes") : "it fails as " + v.failure_class;
    if (x.archive.Manifest() && x.archive.Manifest()->prebuilt) {
      throw NotReproducedError(NotReproducedMessage(x.archive, oracle.target_class(), now, x.result.inductor_configs_json));
    }
    throw HarnessError(x.spec.package + ": the original no longer fails as " + x.spec.failure_class + " (" + now +
                       "); nothing to reduce. " + v.message.substr(0, 500));
  }
  if (x.result.sanity_checked) {
    state.Step("sanity", std::to_string(CountNodes(start_program.nodes)) + " nodes",
               "the original fails as " + oracle.target_class());
  }
}

// RunStrategies: each strategy in turn until none shrinks the program, one node is left
// or the time is out; after a strategy that shrank it, from the first one again.
void RunStrategies(ReductionState& state, const std::vector<const StrategyInfo*>& order) {
  bool progress_made = true;
  while (progress_made && CountNodes(state.current().nodes) > 1 && !state.OutOfTime()) {
    progress_made = false;
    for (const auto* s : order) {
      if (state.OutOfTime()) break;
      state.Step(s->name, std::to_string(CountNodes(state.current().nodes)) + " nodes left", "begins");
      try {
        if (s->run(state)) {
          progress_made = true;
          break;
        }
      } catch (const HarnessError&) {
        throw;
      } catch (const std::exception& e) {
        throw ReducerError(std::string("strategy ") + s->name + " raised: " + e.what());
      }
    }
  }
}

// FinalCheck: the minimal program checked again and the result's verdict, message and
// culprit. Out of time, nothing runs again: the final verdict is the one already seen
// (none for an original the sanity check could not finish).
Verdict FinalCheck(Reduction& x, const ReductionState& state) {
  ReduceResult& result = x.result;
  Oracle& oracle = x.oracle;
  result.minimal = state.current();
  result.minimal_inputs = oracle.InputsFor(result.minimal);
  const bool out_of_time = state.OutOfTime();
  const Verdict final_verdict = out_of_time && !oracle.Known(result.minimal) ? Verdict{} : oracle.Test(result.minimal);
  result.final_rechecked = !out_of_time;
  if (result.final_rechecked) result.final_recheck_failed_again = oracle.Rerun(result.minimal).fails;
  result.failure_class = oracle.target_class();
  if (Is(result.failure_class, FailureClass::kTimeout) && oracle.check().runner.timeout_s < x.check.runner.timeout_s) {
    result.hang_timeout_s = oracle.check().runner.timeout_s;
  }
  result.message = final_verdict.fails || x.spec.failure_message.empty() ? final_verdict.message : x.spec.failure_message;
  result.final_archive = final_verdict.archive;
  result.nodes_after = CountNodes(result.minimal.nodes);
  result.dynamic_shapes = DynamicShapeNotes(result.original, result.minimal);
  // The culprit: the node a localizing strategy named, where the minimal program still
  // has it; else the one node left.
  // A culprit inside control flow kept around it is named by its address
  // (while_loop/while_loop_body_graph_0/relu): the top-level node is the op holding it.
  std::string inner_culprit;
  for (const auto& entry : state.log()) {
    if (entry.culprit.empty()) continue;
    for (const auto& n : result.minimal.nodes) {
      if (n.name == entry.culprit) {
        result.culprit = entry.culprit;
        inner_culprit.clear();
      }
      ForEachNode({n}, [&](const Node& inner, const std::string& scope) {
        if (!scope.empty() && NodePath(inner, scope) == entry.culprit) {
          result.culprit = n.name;
          inner_culprit = entry.culprit;
        }
      });
    }
  }
  if (result.culprit.empty() && result.minimal.nodes.size() == 1) result.culprit = result.minimal.nodes[0].name;
  for (const auto& n : result.minimal.nodes) {
    if (result.culprit.empty() || n.name != result.culprit) continue;
    result.culprit_path = NodePath(n);
    if (!inner_culprit.empty()) {
      result.culprit_path = inner_culprit;
      continue;
    }
    // Control flow kept around one op: that op's address inside it.
    if (!HigherOrderName(n).empty() && OperatorOf(n) != ShortTarget(n.target)) {
      ForEachNode({n}, [&](const Node& inner, const std::string& scope) {
        if (!scope.empty() && HigherOrderName(inner).empty() && inner.target != "torch.ops.aten.clone.default") {
          result.culprit_path = NodePath(inner, scope);
        }
      });
    }
  }
  return final_verdict;
}

// ProfileErrors: an accuracy failure's error, element by element, in the original (as its
// test saw it; one more run of its compiled model, no compile) and in the repro.
void ProfileErrors(Reduction& x) {
  ReduceResult& result = x.result;
  if (!Is(result.failure_class, FailureClass::kAccuracy)) return;
  CheckOptions keep = x.check;
  keep.keep_values = true;
  keep.reruns = 0;  // a picture of the error, not its rate
  try {
    if (!x.profiled_original && x.spec.inductor_configs_json.empty() && x.archive.HasCompiledModel(result.model)) {
      x.original_profile = ProfileFirstFailure("the original", CheckAotiMatchesEager(x.spec.package, &x.inputs, keep),
                                               result.original.Signature().user_outputs);
    }
    if (x.original_profile) result.error_profiles.push_back(*x.original_profile);
    if (!result.final_archive.empty()) {
      if (auto p = ProfileFirstFailure("the repro", CheckAotiMatchesEager(result.final_archive, &result.minimal_inputs, keep),
                                       result.minimal.Signature().user_outputs)) {
        result.error_profiles.push_back(*p);
      }
    }
  } catch (const std::exception& e) {
    x.progress(std::string("  no error profile for report.html: ") + e.what());
  }
}

// TryRandomWeights: random weights in place of the model's, kept only where the failure
// reproduces with them.
void TryRandomWeights(Reduction& x, bool final_fails) {
  ReduceResult& result = x.result;
  if (!x.options.random_weights || result.final_archive.empty() || !final_fails) {
    result.weights_note = std::string("real: the model's own weights, only those the repro uses") +
                          (x.options.random_weights ? " (the repro did not fail on its final check, so random ones "
                                                      "were not tried)"
                                                    : "; --aoti_reduce_random_weights (aoti_reduce --random_weights) "
                                                      "tries random ones");
    return;
  }
  x.progress("random weights: compiling the repro once more with random weights of the same shape, dtype, mean and std");
  const Verdict random = x.oracle.TestWithRandomWeights(result.minimal);
  if (random.fails) {
    result.final_archive = random.archive;
    result.message = random.message;
    result.weights = "random";
    result.weights_note = "random: the repro's floating weights and constants are random values of the same shape, "
                          "dtype, mean and standard deviation as the model's (integer and bool ones are the model's), "
                          "and the failure reproduces with them";
  } else {
    result.weights_note = "real: the model's own weights, only those the repro uses; with random ones the failure "
                          "does not reproduce (" + random.not_failing_reason.substr(0, 300) + ")";
  }
  x.progress("  " + result.weights_note);
}

// RunStageLadder: the stage at fault and a workaround verified on the original, their
// compiles and time counted apart from the reduction's.
void RunStageLadder(Reduction& x, const ReductionState& state, const Program& start_program, bool final_fails) {
  ReduceResult& result = x.result;
  if (!x.options.stage_ladder) {
    result.stage.why_not = "turned off (--aoti_reduce_stage_ladder=false, aoti_reduce --stage_ladder=false)";
    return;
  }
  if (!final_fails || result.culprit.empty() || state.OutOfTime()) {
    result.stage.why_not = !final_fails ? "the repro did not fail on its final check"
                           : result.culprit.empty() ? "the repro names no culprit node"
                                                    : "out of time";
    return;
  }
  const auto begun = std::chrono::steady_clock::now();
  StageLadderOptions ladder;
  ladder.ladder_budget = x.options.ladder_budget;
  ladder.workaround_budget = x.options.workaround_budget;
  ladder.run_seconds_before = x.original_run_seconds;
  if (ladder.run_seconds_before < 0 && Is(result.failure_class, FailureClass::kAccuracy) && x.archive.HasCompiledModel(result.model)) {
    // What the original's compiled run costs as built (it runs to its end): one run, no compile.
    const CompiledOutcome o = RunCompiled(x.spec.package, result.model, x.inputs, x.oracle.check().runner);
    if (o.ok()) ladder.run_seconds_before = o.seconds;
  }
  // The original as the sanity check compiled it (its call signature flat, as every candidate's).
  // The culprit by its address: inside control flow kept around it, the op in there.
  const std::string& culprit = result.culprit_path.empty() ? result.culprit : result.culprit_path;
  result.stage = FindStageAndWorkaround(x.oracle, start_program, result.minimal, culprit, ladder,
                                        [&] { return state.OutOfTime(); }, x.progress);
  result.stage.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
}

// CountWork: the oracle's, the pool's and the state's figures into the result (all but
// the compiles, counted before the stage ladder).
void CountWork(Reduction& x, const ReductionState& state, const CompileClient& client,
               const std::vector<std::unique_ptr<CompileClient>>& more_servers, const CompileCache& disk_cache) {
  ReduceResult& result = x.result;
  const Oracle& oracle = x.oracle;
  result.cache_hits = oracle.cache_hits();
  result.disk_cache_hits = oracle.disk_cache_hits();
  result.compile_cache_dir = disk_cache.dir();
  result.compile_cache_why = x.options.compile_cache.why;
  if (disk_cache.remote_enabled()) {
    result.remote_cache = disk_cache.remote().url;
    result.remote_cache_hits = disk_cache.remote_hits();
    result.remote_cache_stores = disk_cache.remote_stores();
    result.remote_cache_problem = disk_cache.remote_problem();
  }
  result.runs = oracle.runs();
  result.speculative_compiles = oracle.speculative_compiles();
  result.server_requests.push_back(client.requests());
  for (const auto& c : more_servers) result.server_requests.push_back(c->requests());
  result.flaky = state.flaky();
  result.compile_seconds = oracle.compile_seconds();
  result.log = state.log();
  result.checkpoints = state.accepted();
}

}  // namespace

ReduceResult Reduce(const ReduceSpec& spec, const ReduceOptions& given_options, CompileClient* client,
                    const std::string& work_dir, const Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  ReduceOptions options = WithBudget(given_options, start);
  if (options.deadline.set()) client->SetDeadline(options.deadline);
  ReduceResult result;
  auto archive = Pt2Archive::Open(spec.package);
  result.model = archive->ResolveModelName(spec.model);
  result.package_name = archive->DisplayName();
  const std::string& model = result.model;
  if (const std::string not_held = archive->ProgramNotHeld(model); !not_held.empty()) {
    // A package aoti_package wrote without its program (torch's serializer could not write it).
    throw UnsupportedConstruct(spec.package + ": not reduced: the package holds no program to cut down (" + not_held +
                               "); its compiled model was judged against the outputs Python recorded when it was built");
  }
  result.original = Program::Parse(archive->ProgramJson(model), spec.package);
  result.nodes_before = CountNodes(result.original.nodes);
  const std::vector<at::Tensor> inputs = spec.inputs.empty() ? archive->SampleInputs() : spec.inputs;
  result.inductor_configs_json = !spec.inductor_configs_json.empty()
                                     ? spec.inductor_configs_json
                                     : (archive->Manifest() ? archive->Manifest()->inductor_configs_json : "{}");
  RequireCompilerFailure(spec.failure_class);
  // The compile server imports torch and probes the host while the original runs here.
  client->Warm();
  // 1. Every value of the original program, from one eager run (its custom operators from
  // the test's op libraries unless linked in).
  // An operator written only in Python (the package's record) is named as such: the reducer
  // runs every candidate's eager in this process, which cannot run it.
  EnsureOperators(result.original, spec.check.runner,
                  archive->Manifest() ? archive->Manifest()->python_ops : std::vector<PythonOp>{});
  ValueStore values(options.offload_to_disk ? work_dir + "/values" : "");
  const auto input_names = UserInputNames(result.original);
  if (input_names.size() != inputs.size()) {
    throw HarnessError(spec.package + ": the program takes " + std::to_string(input_names.size()) + " inputs, " +
                       std::to_string(inputs.size()) + " were given");
  }
  for (size_t i = 0; i < input_names.size(); ++i) values.Put(input_names[i], inputs[i]);
  // Candidates are judged as the test judged the original: its rule, its tolerances, and
  // bool and integer outputs (an argmax) compared or ignored as it chose.
  CheckOptions check = spec.check;
  check.model = model;
  if (options.deadline.set()) check.runner.deadline = options.deadline;
  const auto taken = RecordEagerValues(*archive, model, &result.original, &values, OneRunDeadline(check.runner));
  Oracle oracle(*archive, model, result.inductor_configs_json, &values, check, client, work_dir);
  oracle.SetHangTimeout(options.hang_timeout_s);
  result.jobs = options.jobs > 0 ? options.jobs : DefaultJobs();
  const auto more_servers = StartPool(client, result.jobs, &oracle, progress);
  CompileCache disk_cache(WithRemoteClient(options.compile_cache, client->options()));
  oracle.UseDiskCache(&disk_cache);
  progress(disk_cache.enabled() ? "compile cache: " + disk_cache.dir() + " (" + options.compile_cache.why + ")"
                                 : "no compile cache" + (options.compile_cache.why.empty() ? "" : ": " + options.compile_cache.why));
  if (disk_cache.remote_enabled()) progress("remote compile cache: " + disk_cache.remote().url);
  oracle.SetTarget(spec.failure_class, options.check_str);
  if (!spec.failure_message.empty()) oracle.NoteOriginalFailure(spec.failure_message);
  Reduction x{spec, options, progress, *archive, inputs, check, oracle, result};
  CheckAsBuilt(x);
  SayHowCandidatesAreJudged(x);
  oracle.SkipExportErrors(options.skip_export_errors);
  const Program start_program = RemoveUnusedInputs(EliminateDeadCode(result.original));
  const std::optional<Program> lifted = LiftForReduction(x, start_program, taken, &values);
  const std::vector<const StrategyInfo*> order = StrategyOrder(options.strategies);
  for (const auto* s : order) result.strategies.push_back(s->name);
  ReductionState state(start_program, &oracle, &options, progress);
  // 2. Sanity (on the control flow lifted first, where there is some); 3. the strategies;
  // 4. the final result, checked again.
  if (!lifted || !SanityCheckLifted(x, state, order, start_program, *lifted)) SanityCheck(x, state, order, start_program);
  RunStrategies(state, order);
  result.budget_exhausted = state.OutOfTime();
  if (result.budget_exhausted) progress("the time budget is spent; keeping the best result so far");
  const Verdict final_verdict = FinalCheck(x, state);
  ProfileErrors(x);
  TryRandomWeights(x, final_verdict.fails);
  result.compiles = oracle.compiles();  // the ladder's compiles are counted apart
  const auto reduced_at = std::chrono::steady_clock::now();
  RunStageLadder(x, state, start_program, final_verdict.fails);
  CountWork(x, state, *client, more_servers, disk_cache);
  result.seconds = std::chrono::duration<double>(reduced_at - start).count();
  return result;
}

}  // namespace aoti
