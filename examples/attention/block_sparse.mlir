// Block-sparse attention: a table in an aux tensor (i32 [ceil(Sq / 128) x ceil(Skv / 128)], row-major)
// says which 128 x 128 blocks of the score matrix are kept (non-zero) and which are skipped (zero). The
// compiler cannot read the table, so the mask is classified at run time: flare::attention (or a
// flare::BlockMask built once) runs the generated <name>_block_mask kernel, which lists each block of
// query rows' kept key blocks, and the attention kernel visits only those, without mask code where a
// whole block is kept: time proportional to the density. Compiled on its own (flarec) the kernel
// evaluates the table per element of every block instead.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec block_sparse.mlir --emit=ptx -o block_sparse.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md; add
// --attention-config with block_lists for the kernel and the classifier that flare::attention launches).
func.func @block_sparse(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %table: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%table : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %blocks: tensor<?xi32>):
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %skv = attn.kv_len
      %padded = arith.addi %skv, %c127 : index
      %width = arith.divui %padded, %c128 : index
      %qb = arith.divui %qi, %c128 : index
      %kb = arith.divui %kv, %c128 : index
      %row = arith.muli %qb, %width : index
      %i = arith.addi %row, %kb : index
      %kept = attn.aux_load %blocks[%i] : tensor<?xi32>
      %zero = arith.constant 0 : i32
      %keep = arith.cmpi ne, %kept, %zero : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
