#pragma once
// The per-CN and per-transfer records of an output folder add up to its summary (results.json): every energy
// component belongs to exactly one entry of the energy breakdown.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/csv.hpp"

namespace monet::test {

/// Checks the rule every transfer record follows (docs/experiments.md) and that the records sum to the
/// breakdown: links = every non-spill record's link energy; spills = spill and refetch records' energy; off-chip =
/// reads from and writes to off-chip memory of the other records + the CNs' off-chip accesses; on-chip likewise
/// at cores; MAC = the CNs' MAC energy. Sums of up to 10^5 doubles: relative tolerance 1e-9.
inline void expect_records_sum_to_summary(const std::filesystem::path& out, const std::string& offchip = "dram") {
  const nlohmann::json r = nlohmann::json::parse(read_file(out / "results.json"));
  double mac = 0, onchip = 0, off = 0, link = 0, spill = 0;
  for (const CsvRow& n : read_csv(out / "schedule.csv")) {
    mac += n.number("mac_energy_pj");
    onchip += n.number("onchip_memory_energy_pj");
    off += n.number("offchip_energy_pj");
    EXPECT_NEAR(n.number("energy_pj"), n.number("mac_energy_pj") + n.number("onchip_memory_energy_pj") + n.number("offchip_energy_pj"),
                1e-9 * std::max(1.0, n.number("energy_pj")))
        << n["name"];
  }
  for (const CsvRow& t : read_csv(out / "transfers.csv")) {
    const double read = t.number("read_energy_pj"), wire = t.number("link_energy_pj"), write = t.number("write_energy_pj");
    EXPECT_FALSE(t["tensor"].empty()) << t["cause"] << " " << t["from"] << " -> " << t["to"];
    EXPECT_NEAR(t.number("energy_pj"), read + wire + write, 1e-9 * std::max(1.0, t.number("energy_pj")));
    const std::string& cause = t["cause"];
    const bool from_off = t["from"] == offchip, to_off = t["to"] == offchip;
    if (cause == "fetch" || cause == "refetch") {
      EXPECT_TRUE(from_off) << cause;
    }
    if (cause == "writeback" || cause == "spill") {
      EXPECT_TRUE(to_off) << cause;
    }
    if (cause == "stream") {
      EXPECT_TRUE(from_off != to_off) << "a stream record moves data between a core and off-chip memory";
      EXPECT_EQ(read + write, 0.0) << "a streamed operand's accesses are in its CN's cost";
    }
    if (cause == "spill" || cause == "refetch") {
      spill += t.number("energy_pj");
      continue;
    }
    link += wire;
    (from_off ? off : onchip) += read;
    (to_off ? off : onchip) += write;
  }
  const nlohmann::json& e = r["energy_breakdown"];
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
  EXPECT_PRED2(near, mac, e["mac_energy_pj"].get<double>());
  EXPECT_PRED2(near, onchip, e["onchip_memory_energy_pj"].get<double>());
  EXPECT_PRED2(near, off, e["offchip_energy_pj"].get<double>());
  EXPECT_PRED2(near, link, e["link_energy_pj"].get<double>());
  EXPECT_PRED2(near, spill, e["spill_energy_pj"].get<double>());
  // The rest is the chip's idle power over the latency.
  const double total = r["energy_pj"].get<double>();
  EXPECT_NEAR(total - mac - onchip - off - link - spill, e["idle_energy_pj"].get<double>(), 1e-9 * std::max(1.0, total));
}

}  // namespace monet::test
