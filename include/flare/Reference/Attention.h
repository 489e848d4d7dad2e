//===- Attention.h - Float64 CPU reference of attn.attention ----*- C++ -*-===//
//
// The oracle that GPU attention kernels are checked against: exact softmax attention computed in double
// on the CPU, with the op's own score_mod and mask_mod regions evaluated by an interpreter, so a test
// states its modifiers once (in the IR) and never re-implements them by hand. This header pulls in no
// MLIR headers.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_REFERENCE_ATTENTION_H
#define FLARE_REFERENCE_ATTENTION_H

#include <string>
#include <vector>

namespace flare::reference {

/// The sizes and inputs of one attention problem.
struct AttentionProblem {
  int batch = 0, headsQ = 0, headsKV = 0, seqQ = 0, seqKV = 0, headDim = 0;
  /// Dense row-major inputs [B, Hq, Sq, D] and [B, Hkv, Skv, D] (V: [B, Hkv, Skv, Dv]), already rounded
  /// to the kernel's input dtype.
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  /// One vector per aux operand of the op, in operand order; integer aux tensors hold exact integer values.
  std::vector<std::vector<double>> aux;
  /// The op's kv_lens (required exactly when it has them): sequence b has the keys j < kvLens[b]
  /// (0 <= kvLens[b] <= seqKV) and attn.kv_len is kvLens[b] in it. A paged op is computed on K and V
  /// gathered from its pages into the dense [B, Hkv, Skv, D] above (the math does not see the table).
  std::vector<int> kvLens;
  /// The op's cu_seqlens (required exactly when it has them): q is then [1, Hq, seqQ, D] and k, v
  /// [1, Hkv, seqKV, D] with `batch` sequences packed along the rows, sequence b at rows
  /// cuSeqlensQ[b] .. cuSeqlensQ[b + 1] - 1 of q (and of out, lse) and cuSeqlensK[b] .. of k and v;
  /// `batch` is the number of sequences. Rows of no sequence get out 0 and lse NaN.
  std::vector<int> cuSeqlensQ, cuSeqlensK;
  /// The head dim of V and of the output when it differs from Q's and K's (`headDim`); 0: the same.
  int headDimV = 0;
};

struct AttentionResult {
  std::vector<double> out; ///< [B, Hq, Sq, Dv]
  std::vector<double> lse; ///< [B, Hq, Sq], natural log; -inf for a row with no visible key (its out row is 0)
};

/// Parses `mlirSource` (a module holding exactly one attn.attention; if `funcName` is non-empty, the one
/// inside that func.func) and computes attention in float64: s = score_mod(scale * q.k, b, h, i, j, aux...),
/// masked by mask_mod, softmax over j, times V; head h of Q uses KV head h / (Hq / Hkv).
///
/// Throws flare::Error with a clear message (and the op's location where there is one) for: parse and
/// verify errors, no or several attn.attention ops, problem sizes inconsistent with static dims of the op's
/// types or with the aux count, an op in a region the interpreter does not support, and an aux_load index
/// outside its tensor (the message says which aux operand, the index and the tensor length).
AttentionResult attentionReference(const std::string &mlirSource, const AttentionProblem &problem,
                                   const std::string &funcName = "");

struct AttentionGradients {
  std::vector<double> dq;     ///< [B, Hq, Sq, D]
  std::vector<double> dk;     ///< [B, Hkv, Skv, D]
  std::vector<double> dv;     ///< [B, Hkv, Skv, Dv] (Dv: headDimV, or D)
};

/// The gradients of attentionReference's output for the output gradient `dout` (dense [B, Hq, Sq, Dv]),
/// in float64: P recomputed exactly, dV = P^T dO, dS = P * (dP - rowsum(P * dP)) * score_mod'(x) with
/// dP = dO V^T and x = scale * q.k, dQ = scale * dS K, dK = scale * dS^T Q (GQA: dK, dV summed over the
/// query heads of each group). score_mod's derivative is taken by central differences of the
/// interpreted region (independent of the compiler's), aux tensors held constant. Rows that see no key
/// contribute nothing. Throws like attentionReference.
AttentionGradients attentionBackwardReference(const std::string &mlirSource, const AttentionProblem &problem,
                                              const float *dout, const std::string &funcName = "");

} // namespace flare::reference

#endif // FLARE_REFERENCE_ATTENTION_H
