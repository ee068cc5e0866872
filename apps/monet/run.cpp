// `monet run`: an experiment, or the search over its [space] (docs/search.md).
#include <spdlog/spdlog.h>
#include <tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "monet/distributed/ranks.hpp"
#include "monet/experiment/cost_cache_file.hpp"
#include "monet/experiment/plugin_folders.hpp"
#include "monet/report/report.hpp"
#include "monet/report/search_output.hpp"
#include "monet/report/search_report.hpp"
#include "monet/search/pareto.hpp"
#include "monet/util/strings.hpp"
#include "progress.hpp"

namespace monet::cli {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> stop_requested{false};

extern "C" void on_stop_signal(int) {
  stop_requested.store(true);
  // A second Ctrl-C ends the process at once.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

/// Ctrl-C / SIGTERM stop a search after its running batch while this lives.
class StopOnSignal {
 public:
  StopOnSignal() {
    stop_requested.store(false);
    previous_int_ = std::signal(SIGINT, on_stop_signal);
    previous_term_ = std::signal(SIGTERM, on_stop_signal);
  }
  ~StopOnSignal() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError(SourceLocation{file.string()}, "cannot read the file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The batches a stopped search in `dir` recorded (--resume).
std::vector<SearchBatch> resume_journal(const fs::path& dir, const DesignSpace& space) {
  const fs::path journal = dir / "journal.jsonl";
  const fs::path summary = dir / "search.json";
  std::error_code ec;
  if (!fs::exists(journal, ec) || !fs::exists(summary, ec)) {
    throw UserError(SourceLocation{dir.string()}, "--resume: no stopped search here (journal.jsonl and search.json are "
                                                  "written when a search stops)");
  }
  if (read_text(summary).find("\"stopped\": true") == std::string::npos) {
    throw UserError(SourceLocation{summary.string()}, "--resume: this search ran to its end; nothing to resume");
  }
  return read_journal(read_text(journal), journal.string(), space);
}

/// --checkpoint-every: the journal so far and a search.json saying "stopped", written as the output folder
/// (atomically) once `every` seconds have passed since the last; `--resume` continues from it after the run was
/// killed (a node failure). The run's own output replaces it when the search ends.
struct Checkpoints {
  Checkpoints(fs::path d, double e) : dir(std::move(d)), every(e) {}
  fs::path dir;
  double every = 0;
  bool written = false;
  std::string journal;
  std::size_t batches = 0;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

  void add(const SearchBatch& batch) {
    SearchResult one;
    one.batches.push_back(batch);
    journal += journal_jsonl(one);
    ++batches;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last).count() < every) return;
    last = now;
    const std::string state = "{\n \"schema\": \"monet.search/1\",\n \"checkpoint\": true,\n \"stopped\": true,\n \"batches\": " +
                              std::to_string(batches) + "\n}\n";
    write_folder_atomically(dir, true, {{"journal.jsonl", journal}, {"search.json", state}});
    written = true;
    spdlog::info("checkpoint after batch {}: {}/journal.jsonl", batches, dir.string());
  }
};

/// "2 ranks: rank 0 105 points in 3.2 s busy, rank 1 95 points in 3.1 s busy".
std::string rank_loads_text(const std::vector<RankLoad>& loads) {
  std::string out = std::to_string(loads.size()) + " ranks:";
  for (const RankLoad& l : loads) {
    out += (l.rank ? ", rank " : " rank ") + std::to_string(l.rank) + " " + std::to_string(l.points) + " points in " +
           si(l.busy_s, "s") + " busy";
  }
  return out;
}

/// Set once the ranks exist, until they have agreed on the preparation (agree_on_setup).
bool setup_agreement_pending = false;

}  // namespace

int agree_on_setup(bool failed) {
  if (!setup_agreement_pending) return -1;
  setup_agreement_pending = false;
  return world_ranks().first_failed(failed);
}

int run_command(const RunOptions& o) {
  StopOnSignal on_signal;  // from the start: a Ctrl-C while the experiment is prepared stops before the first batch
  std::unique_ptr<tbb::global_control> threads;
  if (o.threads > 0) {
    threads = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                    static_cast<std::size_t>(o.threads));
  }
  // Under mpirun/srun every rank runs this; rank 0 runs the search and writes, the others evaluate for it.
  Ranks& ranks = world_ranks();
  setup_agreement_pending = true;
  if (ranks.rank() != 0) {
    spdlog::set_pattern("[%l] rank " + std::to_string(ranks.rank()) + ": %v");
    if (spdlog::get_level() < spdlog::level::warn) spdlog::set_level(spdlog::level::warn);  // rank 0 tells the story
  }
  // The experiment's [plugins] path (with --set/--unset) extends the registry every plugin name is resolved in.
  const Registry& registry = registry_with(experiment_plugin_path(o.experiment, o.sets, o.unsets));
  for (const PluginLoadFailure& f : registry.failures()) {
    spdlog::warn("plugin library {} skipped: {}", f.library.string(), f.reason);
  }
  const ExperimentSource source(o.experiment, o.sets, registry, o.unsets);
  Experiment e = source.build();
  if (!o.out.empty()) e.output_dir = o.out;
  const fs::path out_dir = e.output_dir;
  if (!o.resume && ranks.rank() == 0) check_output_folder(out_dir, e.overwrite);  // before any work: a refused folder costs no simulation
  std::optional<SpaceSpec> spec = read_space_spec(source);
  const bool searching = spec.has_value();
  if (o.resume && !searching) throw UserError(SourceLocation{o.experiment}, "--resume: the experiment has no [space] to search");

  std::function<void(CostCache&)> preload;
  if (!o.cost_cache.empty()) {
    preload = [&](CostCache& cache) {
      const CostCacheLoad loaded = load_cost_cache(cache, o.cost_cache);
      if (!loaded.warning.empty()) spdlog::warn("{}", loaded.warning);
      spdlog::info("cost cache {}: {} entries", cost_cache_file(o.cost_cache).string(), loaded.entries);
    };
  }
  const DesignEvaluator evaluator(source, spec, registry, preload, !o.resume);
  // Whatever happens next (a finished or stopped search, a point that does not fit), what was costed is kept.
  struct SaveCosts {
    const DesignEvaluator& evaluator;
    const std::string& dir;
    ~SaveCosts() {
      if (dir.empty()) return;
      try {
        const std::size_t n = save_cost_cache(evaluator.costs(), dir);
        spdlog::info("cost cache {}: {} entries stored", cost_cache_file(dir).string(), n);
      } catch (const std::exception& err) {
        spdlog::warn("{}", err.what());
      }
    }
  } save_costs{evaluator, o.cost_cache};
  auto search = registry.create<SearchAlgorithm>(*e.search.plugin, e.search.params);
  if (agree_on_setup(false) >= 0) return 2;  // another rank rejected the input and says why
  if (ranks.rank() != 0) {
    ranks.serve([&evaluator](const DesignPoint& p) { return evaluator.evaluate(p); });
    return 0;
  }
  SearchOptions options;
  ProgressLine line("search " + e.search.name());
  if (searching) options.progress = [&line](const SearchProgress& p) { line.update(p); };
  options.stop = &stop_requested;
  options.ranks = &ranks;
  if (o.resume) {
    options.replay = resume_journal(out_dir, evaluator.space());
    for (const SearchBatch& b : options.replay) evaluator.recall_quality(b.evaluations);  // a command is not run again
  }
  Checkpoints checkpoints{out_dir, o.checkpoint_every};
  if (searching && o.checkpoint_every > 0) options.record = [&checkpoints](const SearchBatch& b) { checkpoints.add(b); };
  const SearchResult r = [&] {
    try {
      return run_search(evaluator, *search, e.seed, options);
    } catch (const UserError& err) {
      if (err.where().known()) throw;
      throw UserError(e.search.where, err.message());  // the kernel's refusal of a plan: the [search] chose it
    }
  }();
  ranks.finish();  // the other ranks store their costs and end while this one writes
  line.finish();
  if (ranks.size() > 1) spdlog::info("ranks: {}", rank_loads_text(r.ranks));
  if (r.stopped && r.failure.empty()) spdlog::warn("search stopped after {} batch(es): writing what was evaluated; `--resume` continues it", r.batches.size());
  ensure(r.stopped || !r.chosen.empty(), "search plugin '" + e.search.name() + "' returned no evaluation");

  if (!searching) {
    const std::optional<DesignPoint> best = best_point(r);
    if (!best) return 130;  // stopped before the point was evaluated
    const DesignEvaluator::Detail detail = evaluator.detail(*best);
    const RunResult result = run_result(r, *best, detail);
    check_schedule_fits(e, result.best.summary, o.experiment);
    write_folder_atomically(out_dir, e.overwrite, output_files(*detail.prepared, result, out_dir));
    std::cout << summary_text(*detail.prepared, result, out_dir);
    return 0;
  }

  // A search: every evaluation, the front, the plots, the journal, and the best point's full report in best/.
  const SearchOutput output = search_output(e, source, evaluator, r, &registry, out_dir);
  write_folder_atomically(out_dir, e.overwrite || o.resume || checkpoints.written, output.files);
  const std::optional<DesignPoint>& best = output.best;
  const std::optional<DesignEvaluator::Detail>& detail = output.detail;
  const RunResult& result = output.result;
  const std::map<std::size_t, std::string>& kept = output.kept;

  const DesignEvaluator::Stats stats = evaluator.stats();
  std::size_t feasible = 0;
  for (const Evaluation& ev : r.archive) feasible += ev.feasible() ? 1 : 0;
  std::ostringstream out;
  out << "experiment    " << e.name << " (seed " << e.seed << ", search " << e.search.name() << ")\n";
  const double size = evaluator.space().size();
  out << "space         " << evaluator.space().genes.size() << " genes, "
      << (size < 1e15 ? with_thousands(static_cast<long long>(size)) : si(size, "")) << " points\n";
  out << "evaluations   " << with_thousands(static_cast<long long>(r.archive.size())) << " distinct ("
      << with_thousands(static_cast<long long>(r.requested)) << " asked for), " << feasible << " feasible, in "
      << r.batches.size() << " batches, " << si(r.wall_seconds, "s") << " ("
      << si(r.wall_seconds > 0 ? static_cast<double>(r.archive.size()) / r.wall_seconds : 0, "") << " evaluations/s)"
      << (r.stopped ? " -- STOPPED" : "") << "\n";
  const double lookups = static_cast<double>(stats.cost_hits + stats.cost_misses);
  out << "caches        " << stats.variants << " experiment variants, " << stats.graphs << " graphs, cost cache "
      << (lookups > 0 ? static_cast<int>(100.0 * static_cast<double>(stats.cost_hits) / lookups) : 0) << " % hits\n";
  if (ranks.size() > 1) out << "ranks         " << rank_loads_text(r.ranks) << "\n";
  out << "front         " << pareto_front(r.archive).size() << " non-dominated feasible points (pareto.csv)\n";
  if (detail) {
    out << "best          ";
    for (std::size_t g = 0; g < evaluator.space().genes.size() && g < 6; ++g) {
      const Gene& gene = evaluator.space().genes[g];
      out << (g ? ", " : "") << gene.name << " = " << gene.labels[static_cast<std::size_t>(best->genes[g])];
    }
    if (evaluator.space().genes.size() > 6) out << ", ...";
    out << "\n";
    std::istringstream best_summary(summary_text(*detail->prepared, result, out_dir / "best"));
    for (std::string l; std::getline(best_summary, l);) {
      if (l.rfind("system", 0) == 0 || l.rfind("one rank", 0) == 0 || l.rfind("latency", 0) == 0 ||
          l.rfind("energy", 0) == 0 || l.rfind("peak", 0) == 0 || l.rfind("INFEASIBLE", 0) == 0) {
        out << "  " << l << "\n";
      }
    }
  }
  out << "results       " << out_dir.string() << "/ (evaluations.csv, pareto.csv, pareto.svg, convergence.svg, search.json, "
      << (e.artifacts.report ? "report.html, " : "") << "best/" << (kept.empty() ? "" : ", front/") << ")\n";
  std::cout << out.str() << std::flush;
  if (!r.failure.empty()) {
    // One write: std::cerr is unbuffered, and under mpirun separate writes interleave with other output.
    std::cerr << ("error: " + r.failure + "\nthe search stopped before that batch; " + out_dir.string() +
                  "/ holds what was evaluated before it (`--resume` continues it)\n");
    return 1;
  }
  return r.stopped ? 130 : 0;
}

}  // namespace monet::cli
