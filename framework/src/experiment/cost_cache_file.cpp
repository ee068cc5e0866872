#include "monet/experiment/cost_cache_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "monet/util/error.hpp"
#include "monet/util/version.hpp"

namespace monet {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json header() { return json{{"format", "monet-cost-cache"}, {"version", kCostCacheFormat}, {"monet", kVersion}}; }

json slots(const std::int64_t (&v)[kSlotCount]) { return json::array({v[0], v[1], v[2]}); }
void read_slots(const json& j, std::int64_t (&v)[kSlotCount]) {
  if (!j.is_array() || j.size() != kSlotCount) throw std::runtime_error("expected 3 slots");
  for (int s = 0; s < kSlotCount; ++s) v[s] = j.at(static_cast<std::size_t>(s)).get<std::int64_t>();
}

json to_json(const TileSignature& key, const CostCache::Entry& e) {
  json j{{"key", key}};
  if (e.error) {
    const SourceLocation& w = e.error->where();
    j["error"] = {{"file", w.file}, {"line", w.line}, {"column", w.column}, {"message", e.error->message()}};
    return j;
  }
  const Cost& c = e.cost;
  j["cost"] = {{"cycles", c.cycles},
               {"ideal_cycles", c.ideal_cycles},
               {"energy_pj", c.energy_pj},
               {"compute_energy_pj", c.compute_energy_pj},
               {"memory_energy_pj", c.memory_energy_pj},
               {"bound", c.bound},
               {"mapping", c.mapping},
               {"exact_cycles", c.exact_cycles},
               {"stall_cycles", c.stall_cycles},
               {"onloading_cycles", c.onloading_cycles},
               {"offloading_cycles", c.offloading_cycles},
               {"spatial_utilization", c.spatial_utilization},
               {"spatial_mapping", c.spatial_mapping},
               {"temporal_mapping", c.temporal_mapping},
               {"mappings_evaluated", c.mappings_evaluated},
               {"offchip_energy_pj", c.offchip_energy_pj},
               {"offchip_read_bits", c.offchip_read_bits},
               {"offchip_write_bits", c.offchip_write_bits},
               {"offchip_read_bits_by_slot", slots(c.offchip_read_bits_by_slot)},
               {"offchip_write_bits_by_slot", slots(c.offchip_write_bits_by_slot)},
               {"onchip_bits", slots(c.onchip_bits)},
               {"offchip_peak_bandwidth", c.offchip_peak_bandwidth}};
  return j;
}

std::pair<TileSignature, CostCache::Entry> from_json(const json& j) {
  std::pair<TileSignature, CostCache::Entry> out;
  out.first = j.at("key").get<TileSignature>();
  if (j.contains("error")) {
    const json& e = j.at("error");
    SourceLocation w{e.at("file").get<std::string>(), e.at("line").get<std::uint32_t>(), e.at("column").get<std::uint32_t>()};
    out.second.error = std::make_shared<const UserError>(w, e.at("message").get<std::string>());
    return out;
  }
  const json& c = j.at("cost");
  Cost& k = out.second.cost;
  k.cycles = c.at("cycles").get<std::int64_t>();
  k.ideal_cycles = c.at("ideal_cycles").get<std::int64_t>();
  k.energy_pj = c.at("energy_pj").get<double>();
  k.compute_energy_pj = c.at("compute_energy_pj").get<double>();
  k.memory_energy_pj = c.at("memory_energy_pj").get<double>();
  k.bound = c.at("bound").get<std::string>();
  k.mapping = c.at("mapping").get<std::string>();
  k.exact_cycles = c.at("exact_cycles").get<double>();
  k.stall_cycles = c.at("stall_cycles").get<double>();
  k.onloading_cycles = c.at("onloading_cycles").get<double>();
  k.offloading_cycles = c.at("offloading_cycles").get<double>();
  k.spatial_utilization = c.at("spatial_utilization").get<double>();
  k.spatial_mapping = c.at("spatial_mapping").get<std::string>();
  k.temporal_mapping = c.at("temporal_mapping").get<std::string>();
  k.mappings_evaluated = c.at("mappings_evaluated").get<std::int64_t>();
  k.offchip_energy_pj = c.at("offchip_energy_pj").get<double>();
  k.offchip_read_bits = c.at("offchip_read_bits").get<std::int64_t>();
  k.offchip_write_bits = c.at("offchip_write_bits").get<std::int64_t>();
  read_slots(c.at("offchip_read_bits_by_slot"), k.offchip_read_bits_by_slot);
  read_slots(c.at("offchip_write_bits_by_slot"), k.offchip_write_bits_by_slot);
  read_slots(c.at("onchip_bits"), k.onchip_bits);
  k.offchip_peak_bandwidth = c.at("offchip_peak_bandwidth").get<double>();
  return out;
}

using Entries = std::map<TileSignature, json>;  // ordered: the file is the same for the same entries

/// The entries of the file, or a warning: a file that fails anywhere is not used at all.
Entries read_file(const fs::path& file, std::string& warning) {
  Entries out;
  std::ifstream in(file);
  if (!in) return out;  // no file yet
  std::string line;
  std::size_t n = 1;  // the line being read
  try {
    if (!std::getline(in, line) || json::parse(line) != header()) {
      warning = file.string() + ": not a cost cache of this monet version; ignored (it is replaced when this run ends)";
      return {};
    }
    while (std::getline(in, line)) {
      ++n;
      json j = json::parse(line);
      auto entry = from_json(j);  // checks every field
      out.emplace(std::move(entry.first), std::move(j));
    }
  } catch (const std::exception& e) {
    warning = file.string() + ":" + std::to_string(n) + ": corrupted cost cache entry (" + e.what() +
              "); the file is ignored (it is replaced when this run ends)";
    return {};
  }
  return out;
}

/// An exclusive advisory lock on DIR/lock for the life of the object (concurrent runs merge one after another).
class DirLock {
 public:
  explicit DirLock(const fs::path& dir) {
    const std::string path = (dir / "lock").string();
    fd_ = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UserError(SourceLocation{dir.string()}, "--cost-cache: cannot create " + path);
    while (::flock(fd_, LOCK_EX) != 0) {
    }
  }
  ~DirLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

fs::path cost_cache_file(const fs::path& dir) {
  return dir / ("costs-v" + std::to_string(kCostCacheFormat) + "-monet-" + kVersion + ".jsonl");
}

CostCacheLoad load_cost_cache(CostCache& cache, const fs::path& dir) {
  CostCacheLoad r;
  for (auto& [key, j] : read_file(cost_cache_file(dir), r.warning)) {
    auto entry = from_json(j);
    cache.insert(entry.first, entry.second);
    ++r.entries;
  }
  return r;
}

std::size_t save_cost_cache(const CostCache& cache, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError(SourceLocation{dir.string()}, "--cost-cache: cannot create the folder: " + ec.message());
  DirLock lock(dir);
  const fs::path file = cost_cache_file(dir);
  std::string warning;
  Entries all = read_file(file, warning);  // what other runs stored since this one started
  for (const auto& [key, entry] : cache.entries()) all.emplace(key, to_json(key, entry));
  // Host and process in the name: the ranks of a distributed run on a shared file system may share a pid.
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const fs::path tmp = file.string() + ".tmp." + host + "." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << header().dump() << "\n";
    for (const auto& [key, j] : all) out << j.dump() << "\n";
    out.flush();
    if (!out) throw UserError(SourceLocation{tmp.string()}, "--cost-cache: cannot write the cost cache");
  }
  fs::rename(tmp, file, ec);
  if (ec) throw UserError(SourceLocation{file.string()}, "--cost-cache: cannot replace the cost cache: " + ec.message());
  return all.size();
}

}  // namespace monet
