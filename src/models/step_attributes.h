// The frontend attributes a training-step module carries so that `gspmd train FILE` needs
// nothing else: what each entry parameter is and how to initialize it, which outputs feed
// which inputs on the next step, and what the leading outputs mean.
//
//   HloModule dense_lm, ..., frontend_attributes={gspmd.model="dense_lm",
//       gspmd.config="layers=2 ... mesh=x=2,y=4", gspmd.carry="2:0,3:1,...",
//       gspmd.metrics="loss,accuracy", gspmd.task="copy", gspmd.vocab="16"}
//   ENTRY main {
//     emb = f32[16,32] parameter(0), sharding={...},
//         frontend_attributes={gspmd.role="param",gspmd.init="normal(0.25)"}
//     adam_m.emb = f32[16,32] parameter(9), ..., frontend_attributes={gspmd.role="opt_state",gspmd.init="zeros"}
//     tokens = s32[8,16] parameter(20), ..., frontend_attributes={gspmd.role="batch",gspmd.init="task(tokens)"}
//     ...
//     ROOT t = (f32[], f32[], f32[16,32], ...) tuple(loss, accuracy, emb_new, ...)
//   }
#pragma once

namespace gspmd::step_attributes {

// On entry parameters.
inline constexpr char kRole[] = "gspmd.role";  // "param", "opt_state" or "batch"
// How the first step's value is made:
//   "normal(S)"   normal with mean 0 and standard deviation S (seeded)
//   "zeros", "ones"
//   "task(FIELD)" the module's synthetic task's FIELD ("tokens", "targets", "weights"),
//                 drawn afresh every step
inline constexpr char kInit[] = "gspmd.init";

inline constexpr char kRoleParam[] = "param";
inline constexpr char kRoleOptState[] = "opt_state";
inline constexpr char kRoleBatch[] = "batch";

// On the module.
inline constexpr char kModel[] = "gspmd.model";      // the model's name
inline constexpr char kConfig[] = "gspmd.config";    // every key=value, then mesh=...
inline constexpr char kCarry[] = "gspmd.carry";      // "OUT:IN,...": output OUT feeds input IN next step
inline constexpr char kMetrics[] = "gspmd.metrics";  // names of outputs 0..k-1 ("loss,accuracy")
inline constexpr char kTask[] = "gspmd.task";        // "copy" or "reverse"
inline constexpr char kVocab[] = "gspmd.vocab";      // token ids are in [0, vocab)

}  // namespace gspmd::step_attributes
