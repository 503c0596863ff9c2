// Resolving MLIR locations into HLO metadata.
#include "frontend/stablehlo/locations.h"

namespace gspmd::stablehlo {
namespace {

std::string Quote(const std::string& text) {
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

Locations::Info Locations::ReadAlias(const Cursor& file, size_t name_pos, const std::string& name, int depth) {
  auto alias = aliases_.find(name);
  if (alias == aliases_.end()) file.ErrorAt(name_pos, StrCat("unknown location alias #", name, ": expected '#", name, " = loc(...)'"));
  Cursor aliased(file.text(), file.filename());
  aliased.set_pos(alias->second);
  return Read(aliased, depth + 1);
}

Locations::Info Locations::Read(Cursor& cursor, int depth) {
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  if (depth > 64) cursor.ErrorAt(pos, "locations nest too deeply (a cycle of location aliases?)");
  Info info;
  if (cursor.TryConsume('#')) {
    std::string_view text = cursor.text();
    size_t end = cursor.pos();
    while (end < text.size() && IsIdChar(text[end])) ++end;
    std::string name(text.substr(cursor.pos(), end - cursor.pos()));
    cursor.set_pos(end);
    return ReadAlias(cursor, pos, name, depth);
  }
  if (cursor.Peek() == '"') {
    std::string text = cursor.ReadString("a location string");
    if (cursor.TryConsume(':')) {
      info.file = std::move(text);
      info.line = cursor.ReadInt("a line number in the location");
      if (cursor.TryConsume(':')) cursor.ReadInt("a column number in the location");
      if (cursor.TryKeyword("to")) {
        cursor.ReadInt("the end of the location range");
        if (cursor.TryConsume(':')) cursor.ReadInt("the end column of the location range");
      }
      return info;
    }
    if (cursor.TryConsume('(')) {
      info = Read(cursor, depth + 1);
      cursor.Expect(')', "')' after the location of a name location");
    }
    info.op_name = std::move(text);
    return info;
  }
  if (cursor.TryKeyword("callsite")) {
    cursor.Expect('(', "'(' after callsite");
    Info callee = Read(cursor, depth + 1);
    cursor.ExpectKeyword("at", "'at' in callsite(callee at caller)");
    Info caller = Read(cursor, depth + 1);
    cursor.Expect(')', "')' to close callsite(...)");
    if (callee.file.empty()) {
      callee.file = std::move(caller.file);
      callee.line = caller.line;
    }
    if (callee.op_name.empty()) callee.op_name = std::move(caller.op_name);
    return callee;
  }
  if (cursor.TryKeyword("fused")) {
    if (cursor.Peek() == '<') cursor.ReadBalanced("'<'");
    cursor.Expect('[', "'[' after fused");
    if (!cursor.TryConsume(']')) {
      do {
        Info part = Read(cursor, depth + 1);
        if (info.op_name.empty()) info.op_name = std::move(part.op_name);
        if (info.file.empty()) {
          info.file = std::move(part.file);
          info.line = part.line;
        }
      } while (cursor.TryConsume(','));
      cursor.Expect(']', "',' or ']' in fused[...]");
    }
    return info;
  }
  if (cursor.TryKeyword("unknown")) return info;
  cursor.ErrorExpected("a location (\"file\":line:col, \"name\"(...), callsite(...), fused[...], unknown or #alias)");
}

void Locations::Resolve(const Cursor& file) {
  for (const Pending& pending : pending_) {
    if (!pending.instruction->metadata.empty()) continue;
    auto cached = metadata_by_text_.find(pending.text);
    if (cached == metadata_by_text_.end()) {
      Cursor cursor(file.text(), file.filename());
      cursor.set_pos(pending.offset);
      Info info = Read(cursor, 0);
      cursor.Expect(')', "')' to close loc(...)");
      std::string text;
      if (!info.op_name.empty()) text += "op_name=" + Quote(info.op_name);
      if (!info.file.empty()) {
        if (!text.empty()) text += ' ';
        text += "source_file=" + Quote(info.file) + " source_line=" + std::to_string(info.line);
      }
      cached = metadata_by_text_.emplace(pending.text, std::move(text)).first;
    }
    pending.instruction->metadata = cached->second;
  }
  pending_.clear();
}

}  // namespace gspmd::stablehlo
