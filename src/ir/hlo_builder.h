// HloBuilder: appends instructions to a computation, inferring result shapes, with unique
// names. Used by the partitioner (and later by the C++ model-building API).
#pragma once

#include <cstdint>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"

namespace gspmd {

// Hands out module-wide unique instruction names: "add", "add.1", "add.2", ...
class NameUniquer {
 public:
  // Registers every name already used in the module.
  void ReserveAll(const Module& module);
  void Reserve(const std::string& name);
  // `base` when unused, else base.N for the smallest N past the last one handed out for base.
  std::string Unique(const std::string& base);

 private:
  // What is known of the names base.N of a base that is taken, by the base's hash (two bases
  // with one hash share a counter, which again only skips free names), in an open-addressing
  // table like HashSet's: a partitioner re-adding cloned names asks for thousands of bases.
  struct Base {
    uint64_t hash = 0;        // 0: an empty slot
    int64_t last_suffix = 0;  // the last N handed out
    // Index in reserved_ of the suffixes N of reserved names base.N (-1: none). Unique steps
    // over them without building and probing each name (a module with add.1 ... add.5000
    // would cost 5000 probes on its first new add).
    int32_t reserved = -1;
  };
  class BaseTable {
   public:
    // The entry of `hash`, added when new; valid until the next call.
    Base& Find(uint64_t hash);

   private:
    Base& Slot(uint64_t hash);
    std::vector<Base> slots_;
    size_t size_ = 0;
  };
  // The names in use, as 64-bit hashes in an open-addressing table: one probe of a flat array
  // per name (a node-based set of strings cost a cache miss per node). Two names with the same
  // hash only make Unique skip a free name, never hand out a used one.
  class HashSet {
   public:
    // Whether the hash was new.
    bool Insert(uint64_t hash);
    void Reserve(size_t count);

   private:
    void Grow(size_t slot_count);
    std::vector<uint64_t> slots_;  // 0: empty (a hash of 0 is stored as 1)
    size_t size_ = 0;
  };
  static uint64_t Hash(std::string_view name);
  HashSet used_;
  BaseTable bases_;
  // Per base with reserved suffixes: the suffixes, sorted and unique when `sorted`.
  struct Reserved {
    std::vector<int64_t> suffixes;
    bool sorted = true;
  };
  std::vector<Reserved> reserved_;
};

// Appends instructions at the end of `computation`:
//   HloBuilder b(computation, &names);
//   Instruction* pid = b.PartitionId();
//   Instruction* sum = b.Binary(Opcode::kAdd, x, y);
class HloBuilder {
 public:
  HloBuilder(Computation* computation, NameUniquer* names) : computation_(computation), names_(names) {}

  Computation* computation() const { return computation_; }
  NameUniquer* names() const { return names_; }
  // Instructions added from now on that have no source take `user_instruction`'s (the one a
  // pass is rewriting), so later errors point at what the user wrote; nullptr stops that.
  void set_source_instruction(const Instruction* user_instruction) { source_instruction_ = user_instruction; }
  // Instructions added from now on without metadata get metadata={op_name="OP_NAME"} (where in
  // the model they come from, for reports); "" stops that.
  void set_op_name(std::string op_name) { op_name_ = std::move(op_name); }
  const std::string& op_name() const { return op_name_; }

  // Adds a ready-made instruction (named `name_hint`, uniqued, if it has no name).
  Instruction* Add(std::unique_ptr<Instruction> instruction);
  // A new instruction of `opcode` with the given shape and operands.
  Instruction* AddOp(Opcode opcode, Shape shape, const std::vector<Instruction*>& operands);

  Instruction* Parameter(int64_t number, Shape shape, const std::string& name = "param");
  Instruction* Constant(Literal literal);
  Instruction* ScalarConstant(ElementType type, double value);
  Instruction* S32Constant(int64_t value) { return ScalarConstant(ElementType::kS32, static_cast<double>(value)); }
  // partition-id (u32[]); one per computation, reused.
  Instruction* PartitionId();
  // s32[] table[partition-id]: a constant table indexed by the partition id.
  Instruction* TableLookup(const std::vector<int64_t>& table);

  Instruction* Unary(Opcode opcode, Instruction* operand);
  Instruction* Binary(Opcode opcode, Instruction* lhs, Instruction* rhs);
  Instruction* Compare(Instruction* lhs, Instruction* rhs, ComparisonDirection direction);
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false);
  Instruction* Convert(Instruction* operand, ElementType type);
  Instruction* Broadcast(Instruction* operand, std::vector<int64_t> result_dims,
                         std::vector<int64_t> dimensions);
  // Broadcasts a scalar to `dims` with the scalar's element type.
  Instruction* BroadcastScalar(Instruction* scalar, std::vector<int64_t> dims);
  Instruction* Reshape(Instruction* operand, std::vector<int64_t> dims);
  Instruction* Transpose(Instruction* operand, std::vector<int64_t> permutation);
  Instruction* Slice(Instruction* operand, std::vector<SliceDim> slice);
  // Slices [0, limit) of each dim.
  Instruction* SliceToSize(Instruction* operand, const std::vector<int64_t>& limits);
  Instruction* DynamicSlice(Instruction* operand, const std::vector<Instruction*>& starts,
                            std::vector<int64_t> sizes);
  Instruction* DynamicUpdateSlice(Instruction* operand, Instruction* update,
                                  const std::vector<Instruction*>& starts);
  Instruction* Pad(Instruction* operand, Instruction* value, PaddingConfig padding);
  // Pads the high end of each dim up to `dims` with `value` (a scalar constant).
  Instruction* PadToSize(Instruction* operand, const std::vector<int64_t>& dims, Instruction* value);
  Instruction* Concatenate(const std::vector<Instruction*>& operands, int64_t dimension);
  Instruction* Iota(Shape shape, int64_t dimension);
  Instruction* Tuple(const std::vector<Instruction*>& elements);
  Instruction* GetTupleElement(Instruction* tuple, int64_t index);
  Instruction* Copy(Instruction* operand) { return Unary(Opcode::kCopy, operand); }

 private:
  Computation* computation_;
  NameUniquer* names_;
  Instruction* partition_id_ = nullptr;
  const Instruction* source_instruction_ = nullptr;
  std::string op_name_;
};

// Names `instruction` after its opcode unless it has a name, uniqued.
std::string DefaultName(const Instruction& instruction);

}  // namespace gspmd
