#pragma once
// CMOS technology scaling of energy and area relative to 45 nm at 0.9 V (the node and supply of Horowitz's
// ISSCC 2014 numbers), from A. Stillmaker and B. Baas, "Scaling equations for the accurate prediction of CMOS
// device performance from 180 nm to 7 nm", Integration 58:74-81, 2017 (its fitted tables; docs/estimators.md
// gives the transcriptions they were checked against).

namespace monet::plugins::horowitz {

inline constexpr double kSourceNm = 45.0;
inline constexpr double kSourceVdd = 0.9;
inline constexpr double kMinNm = 7.0;
inline constexpr double kMaxNm = 130.0;

/// Area at `nm` / area at 45 nm. Table nodes 130, 90, 65, 45, 32, 20, 16, 14, 10, 7 nm; linear in nm between
/// neighbouring nodes.
double area_factor(double nm);
/// Energy at (`nm`, `vdd`) / energy at (45 nm, 0.9 V): the paper's fitted a·V² + b·V + c of each node
/// (high-performance devices at 45 nm and below), linear in nm between neighbouring nodes.
double energy_factor(double nm, double vdd);

}  // namespace monet::plugins::horowitz
