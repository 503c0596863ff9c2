// Reading and writing NumPy .npy files as Literals.
#pragma once

#include <string>

#include "ir/literal.h"

namespace gspmd {

// Reads a .npy file (format 1.0-3.0, little-endian, C order) of any executable element type
// (bool, int8..int64, uint8..uint64, float16, float32, float64; bfloat16 stored as '<V2' or
// ml_dtypes' 'bfloat16' descr). A malformed file is a UserError naming the file and the problem.
Literal ReadNpy(const std::string& path);
// Writes an array literal (scalars included) as a .npy file.
void WriteNpy(const std::string& path, const Literal& literal);

}  // namespace gspmd
