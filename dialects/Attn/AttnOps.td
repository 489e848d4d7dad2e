//===- AttnOps.td - Operations of the attention dialect -------------------===//
#ifndef FLARE_ATTN_OPS
#define FLARE_ATTN_OPS

include "AttnDialect.td"
include "AttnAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

class Attn_Op<string mnemonic, list<Trait> traits = []> : Op<Attn_Dialect, mnemonic, traits>;

def Attn_AttentionOp : Attn_Op<"attention", [RecursiveMemoryEffects, AttrSizedOperandSegments]> {
  let summary = "exact scaled-dot-product attention with modifier regions";
  let description = [{
    ```mlir
    %o, %lse = attn.attention %q, %k, %v aux(%slopes : tensor<?xf32>) {scale = 0.0883883 : f32}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
        %slope = attn.aux_load %sl[%h] : tensor<?xf32>
        ...
        attn.yield %biased : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
        %keep = arith.cmpi sge, %qi, %kv : index
        attn.yield %keep : i1
      } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
        -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
    ```
    Q is [B, Hq, Sq, D], K [B, Hkv, Skv, D] and V [B, Hkv, Skv, Dv] with Hq a multiple of Hkv (MHA,
    GQA, MQA); D and Dv are static multiples of 16 from 32 to 256, Dv = D but for multi-head latent
    attention (192 / 128). The output has Q's shape with V's head dim, and Q's element type; the
    optional second result is the per-row log-sum-exp [B, Hq, Sq] in f32 (natural log; -inf for a
    row that sees no key, whose output is 0). `scale` defaults to 1/sqrt(D).

    Semantics, per (b, h, i, j) with hk = h / (Hq / Hkv):
      s = score_mod(scale * dot(Q[b, h, i], K[b, hk, j]), b, h, i, j, aux...)
      keep = mask_mod(b, h, i, j, aux...)
      O[b, h, i] = sum_j softmax_j(keep ? s : -inf) V[b, hk, j]

    The keys of a row may be split into parts J_1 .. J_S (the `split_kv` configuration): with
    O_s and LSE_s the output and log-sum-exp of the row over J_s alone,
      LSE = log sum_s exp(LSE_s),   O = sum_s exp(LSE_s - LSE) O_s,
    exactly (a part that keeps no key has LSE_s = -inf and weight 0).

    Caches (decoding, serving). `kv_lens(%lens : tensor<?xi32>)` gives each batch entry its own key
    count: sequence b has the keys j < lens[b] (clamped into [0, Skv]; keys past it do not exist, a
    length of 0 leaves every row without a key) and `attn.kv_len` yields lens[b] in it. Generated
    kernels may read the rows of a sequence's last key block past its length and weigh them exactly
    0, so those rows must hold finite values (zeros, stale keys), as in any cache allocated with zeros. `page_table(%pages :
    tensor<?x?xi32>)` (with `kv_lens`) reads K and V from a paged cache: K and V are then
    [num_pages, Hkv, page_size, D] with a static page size (a multiple of 16, at most 256), and key j of
    sequence b is row j mod page_size of page pages[b, j / page_size]; Skv is max_pages x page_size.
    Entries of a sequence's table past its last used page are never read. The modifiers see the
    logical key index j, so every score_mod and mask_mod works on paged caches.

    Variable-length batches (FlashAttention's varlen). `cu_seqlens(%cq, %ck : tensor<?xi32>,
    tensor<?xi32>)`: Q, K, V and the output hold B sequences packed along their sequence dimension,
    [1, H, total, D] (the LSE [1, Hq, total_q]); sequence b is rows cq[b] .. cq[b + 1] - 1 of Q and
    the output and rows ck[b] .. ck[b + 1] - 1 of K and V, with B = dim(cq) - 1 (offsets
    non-decreasing from 0, at most the totals). The regions see b, the sequence's own query and key
    indices, and its own `attn.q_len` / `attn.kv_len`: each sequence is an attention of its own, and
    rows of other sequences are never written. Zero-length sequences are allowed.

    Both regions are optional and pure: arith and math ops on scalars, `attn.aux_load` of the
    auxiliary 1-D tensors (each region receives every `aux` operand as a trailing block argument),
    and `attn.q_len` / `attn.kv_len`. `mask_class` is derived by `attn-classify-mask`, never
    written by users. `config` (`#attn.config<...>`) is the generated kernel's configuration:
    `attn-choose-config` attaches it where it is missing; one written on the op is kept.
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key, AnyRankedTensor:$value,
                       Optional<TensorOf<[I32]>>:$kv_lens, Optional<TensorOf<[I32]>>:$page_table,
                       Optional<TensorOf<[I32]>>:$cu_seqlens_q, Optional<TensorOf<[I32]>>:$cu_seqlens_k,
                       Variadic<AnyRankedTensor>:$aux, OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<Attn_MaskClassAttr>:$mask_class,
                       OptionalAttr<Attn_ConfigAttr>:$config);
  let results = (outs AnyRankedTensor:$output, Optional<AnyRankedTensor>:$lse);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
    (`page_table` `(` $page_table^ `:` type($page_table) `)`)?
    (`cu_seqlens` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `:` type($cu_seqlens_q) `,` type($cu_seqlens_k) `)`)?
    (`aux` `(` $aux^ `:` type($aux) `)`)?
    attr-dict-with-keyword
    (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
    `:` type($query) `,` type($key) `,` type($value) `->` type($output) (`,` type($lse)^)?
  }];
  let extraClassDeclaration = [{
    /// K and V are pages of a paged cache, addressed through `page_table`.
    bool isPaged() { return static_cast<bool>(getPageTable()); }
    /// Keys per page of a paged cache (K's dimension 2), else 0.
    int64_t getPageSize() {
      return isPaged() ? ::llvm::cast<::mlir::RankedTensorType>(getKey().getType()).getDimSize(2) : 0;
    }
    /// Skv when static (max_pages x page_size for a paged cache), else ShapedType::kDynamic; with
    /// cu_seqlens the packed total, an upper bound of every sequence's.
    int64_t getKeyCount();
    /// Q, K and V hold variable-length sequences packed along their sequence dimension (cu_seqlens).
    bool isVarlen() { return static_cast<bool>(getCuSeqlensQ()); }
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
                                     ParentOneOf<["AttentionOp"]>]> {
  let summary = "the value of a modifier region";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Attn_AuxLoadOp : Attn_Op<"aux_load", [Pure, ParentOneOf<["AttentionOp"]>,
    TypesMatchWith<"the result is an element of the tensor", "tensor", "result",
                   "::llvm::cast<::mlir::ShapedType>($_self).getElementType()">]> {
  let summary = "one element of an auxiliary tensor, read inside a modifier region";
  let description = [{
    `%x = attn.aux_load %slopes[%h] : tensor<?xf32>` reads element `%h` of an `aux` tensor (a block
    argument of the enclosing modifier region). An index outside the tensor is an error of the
    modifier; generated kernels clamp it into range, the reference rejects it.
  }];
  let arguments = (ins AnyRankedTensor:$tensor, Index:$index);
  let results = (outs AnyTypeOf<[I32, I64, F32, F16, BF16]>:$result);
  let assemblyFormat = "$tensor `[` $index `]` attr-dict `:` type($tensor)";
  let hasVerifier = 1;
}

def Attn_QLenOp : Attn_Op<"q_len", [Pure, ParentOneOf<["AttentionOp"]>]> {
  let summary = "the query sequence length Sq, inside a modifier region";
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def Attn_KVLenOp : Attn_Op<"kv_len", [Pure, ParentOneOf<["AttentionOp"]>]> {
  let summary = "the key/value sequence length Skv, inside a modifier region";
  let description = [{
    Bottom-right aligned causal attention (the last query sees the last key) keeps
    `kv <= qi + (kv_len - q_len)`.
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

#endif // FLARE_ATTN_OPS
