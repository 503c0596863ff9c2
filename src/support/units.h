// The one way human-readable output spells bytes, times, ratios and fractions.
//
// Every command's text output (lint, report, simulate, autoshard, train's progress, the HTML
// report) goes through these, so one figure reads the same everywhere. JSON output keeps exact
// figures (integral bytes, seconds as numbers) and never uses them.
//
// Conventions, chosen once:
//  - bytes in binary units, B below a KiB then KiB, MiB, GiB, TiB, PiB, EiB, with three
//    significant digits: "512 B", "36.3 KiB", "2.72 GiB", "1000 KiB". Bytes are whole: a
//    fractional figure (a padding averaged over tiles) rounds to the nearest byte first.
//  - times in ns, us (ASCII, as in the rest of the code), ms and s with three significant
//    digits ("850 ns", "12.4 us", "3.21 ms", "1.52 s"); from a minute on, whole minutes and
//    seconds ("2 min 5 s"), from an hour on, hours and minutes ("1 h 20 min"). Zero is "0 s".
//  - a ratio of two quantities of the same kind (a speedup, one plan's step time against
//    another's) as a multiple with three significant digits: "0.75x", "1.50x", "12.3x".
//  - a fraction of a whole (utilization, padding share, a gap) as a percentage with one
//    decimal: 0.75 -> "75.0%".
// A value rounding up to the next unit moves to it (1023.96 KiB is "1.00 MiB", 999.7 ns is
// "1.00 us"). Negative values carry a leading '-'; NaN and infinities are spelled "NaN" and
// "inf" before the unit. The text never depends on the C locale.
#pragma once

#include <string>

namespace gspmd {

// 37124 -> "36.3 KiB".
std::string FormatBytes(double bytes);

// 0.00321 -> "3.21 ms".
std::string FormatSeconds(double seconds);

// 0.75 -> "0.75x".
std::string FormatRatio(double ratio);

// 0.75 -> "75.0%".
std::string FormatPercent(double fraction);

}  // namespace gspmd
