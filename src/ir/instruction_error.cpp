// Located errors about instructions.
#include "ir/instruction_error.h"

namespace gspmd {

void ThrowInstructionError(const Instruction& instruction, const std::string& message) {
  const InstructionSource* source = instruction.source();
  if (source == nullptr) throw UserError(StrCat("%", instruction.name(), ": error: ", message));
  ThrowUserErrorAt(source->location, StrCat("%", source->name, ": ", message));
}

}  // namespace gspmd
