// attn.attention over caches: the kv_lens (per-sequence key counts) and page_table (paged K/V)
// operands.
//   - round trip of the custom form (also through the generic form) of valid uses: kv_lens alone on
//     [B, Hkv, Skv, D] keys, and kv_lens with a page table on [num_pages, Hkv, page_size, D] keys,
//     where num_pages need not be the batch size; static and dynamic shapes, GQA, modifiers and LSE;
//   - every verifier error of the two operands: element types and ranks, the batch sizes they must
//     share with the query, a page table without kv_lens, K and V disagreeing on pages, heads or page
//     size, page sizes that are dynamic, not a multiple of 16 or above 256, and a table whose
//     max_pages x page_size exceeds the longest supported sequence. The invalid cases print nothing
//     and are checked by -verify-diagnostics.
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// Valid uses
//===----------------------------------------------------------------------===//

// A decode step over a paged cache: 2 sequences of 1 query row, 64 pages of 16 keys shared by both
// (the table holds up to 32 pages per sequence), GQA 8 / 2, with the LSE.
// CHECK-LABEL: func.func @paged_decode
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x8x1x128xbf16>, %[[K:[^:]*]]: tensor<64x2x16x128xbf16>, %[[V:[^:]*]]: tensor<64x2x16x128xbf16>, %[[LENS:[^:]*]]: tensor<2xi32>, %[[PAGES:[^:]*]]: tensor<2x32xi32>)
// CHECK-NEXT: %[[O:[^,]*]], %[[LSE:[^ ]*]] = attn.attention %[[Q]], %[[K]], %[[V]] kv_lens(%[[LENS]] : tensor<2xi32>) page_table(%[[PAGES]] : tensor<2x32xi32>) : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16> -> tensor<2x8x1x128xbf16>, tensor<2x8x1xf32>
// CHECK-NEXT: return %[[O]], %[[LSE]]
func.func @paged_decode(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x16x128xbf16>,
                        %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) -> (tensor<2x8x1x128xbf16>, tensor<2x8x1xf32>) {
  %o, %lse = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16> -> tensor<2x8x1x128xbf16>, tensor<2x8x1xf32>
  return %o, %lse : tensor<2x8x1x128xbf16>, tensor<2x8x1xf32>
}

// -----

// Dynamic shapes with a page size of 256 and a bottom-right causal mask on the sequence's own length
// (attn.kv_len): the operands sit between the values and the regions.
// CHECK-LABEL: func.func @paged_dynamic
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kv_lens(%{{.*}} : tensor<?xi32>) page_table(%{{.*}} : tensor<?x?xi32>) mask_mod {
// CHECK: attn.kv_len
// CHECK: attn.q_len
// CHECK: arith.cmpi sle
// CHECK: } : tensor<?x?x?x64xf16>, tensor<?x?x256x64xf16>, tensor<?x?x256x64xf16> -> tensor<?x?x?x64xf16>
func.func @paged_dynamic(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x256x64xf16>, %v: tensor<?x?x256x64xf16>,
                         %lens: tensor<?xi32>, %pages: tensor<?x?xi32>) -> tensor<?x?x?x64xf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %nkv = attn.kv_len
      %nq = attn.q_len
      %shift = arith.subi %nkv, %nq : index
      %diag = arith.addi %qi, %shift : index
      %keep = arith.cmpi sle, %kv, %diag : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xf16>, tensor<?x?x256x64xf16>, tensor<?x?x256x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// kv_lens alone: K and V keep their [B, Hkv, Skv, D] layout (each sequence uses its first lens[b] keys).
// CHECK-LABEL: func.func @lens_only
// CHECK-SAME: %[[LENS:[^:]*]]: tensor<4xi32>)
// CHECK-NEXT: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kv_lens(%[[LENS]] : tensor<4xi32>) : tensor<4x8x128x128xbf16>, tensor<4x8x1024x128xbf16>, tensor<4x8x1024x128xbf16> -> tensor<4x8x128x128xbf16>
// CHECK-NOT: page_table
// CHECK: return
func.func @lens_only(%q: tensor<4x8x128x128xbf16>, %k: tensor<4x8x1024x128xbf16>, %v: tensor<4x8x1024x128xbf16>,
                     %lens: tensor<4xi32>) -> tensor<4x8x128x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<4xi32>)
      : tensor<4x8x128x128xbf16>, tensor<4x8x1024x128xbf16>, tensor<4x8x1024x128xbf16> -> tensor<4x8x128x128xbf16>
  return %o : tensor<4x8x128x128xbf16>
}

// -----

// A static query batch against dynamic lens and table batches is accepted (checked at launch), and
// K and V may leave the number of pages dynamic on one side.
// CHECK-LABEL: func.func @mixed_static
// CHECK: kv_lens(%{{.*}} : tensor<?xi32>) page_table(%{{.*}} : tensor<?x8xi32>) : tensor<3x4x16x128xbf16>, tensor<?x4x48x128xbf16>, tensor<100x4x48x128xbf16> -> tensor<3x4x16x128xbf16>
func.func @mixed_static(%q: tensor<3x4x16x128xbf16>, %k: tensor<?x4x48x128xbf16>, %v: tensor<100x4x48x128xbf16>,
                        %lens: tensor<?xi32>, %pages: tensor<?x8xi32>) -> tensor<3x4x16x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x8xi32>)
      : tensor<3x4x16x128xbf16>, tensor<?x4x48x128xbf16>, tensor<100x4x48x128xbf16> -> tensor<3x4x16x128xbf16>
  return %o : tensor<3x4x16x128xbf16>
}

//===----------------------------------------------------------------------===//
// kv_lens
//===----------------------------------------------------------------------===//

// -----

// Key counts are i32.
func.func @lens_i64(%q: tensor<2x8x1x128xbf16>, %k: tensor<2x8x64x128xbf16>, %v: tensor<2x8x64x128xbf16>, %lens: tensor<2xi64>) {
  // expected-error @+1 {{'attn.attention' op operand #3 must be tensor of 32-bit signless integer values, but got 'tensor<2xi64>'}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi64>)
      : tensor<2x8x1x128xbf16>, tensor<2x8x64x128xbf16>, tensor<2x8x64x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// One count per sequence: a rank-2 tensor is rejected.
func.func @lens_rank2(%q: tensor<2x8x1x128xbf16>, %k: tensor<2x8x64x128xbf16>, %v: tensor<2x8x64x128xbf16>, %lens: tensor<2x1xi32>) {
  // expected-error @+1 {{'attn.attention' op kv_lens must be i32 [batch] with the query's batch size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2x1xi32>)
      : tensor<2x8x1x128xbf16>, tensor<2x8x64x128xbf16>, tensor<2x8x64x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// ...as are 3 counts for a batch of 2.
func.func @lens_batch(%q: tensor<2x8x1x128xbf16>, %k: tensor<2x8x64x128xbf16>, %v: tensor<2x8x64x128xbf16>, %lens: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op kv_lens must be i32 [batch] with the query's batch size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<3xi32>)
      : tensor<2x8x1x128xbf16>, tensor<2x8x64x128xbf16>, tensor<2x8x64x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// The counts follow the query's batch with a paged cache too (not the number of pages).
func.func @lens_batch_paged(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x16x128xbf16>,
                            %lens: tensor<64xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op kv_lens must be i32 [batch] with the query's batch size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<64xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// kv_lens alone does not page the cache: K and V still carry the query's batch.
func.func @lens_unpaged_batch(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x8x16x128xbf16>, %v: tensor<64x8x16x128xbf16>, %lens: tensor<2xi32>) {
  // expected-error @+1 {{'attn.attention' op query, key and value must have the same batch size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x8x16x128xbf16>, tensor<64x8x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

//===----------------------------------------------------------------------===//
// page_table
//===----------------------------------------------------------------------===//

// -----

// Page indices are i32.
func.func @table_i64(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x16x128xbf16>,
                     %lens: tensor<2xi32>, %pages: tensor<2x32xi64>) {
  // expected-error @+1 {{'attn.attention' op operand #4 must be tensor of 32-bit signless integer values, but got 'tensor<2x32xi64>'}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi64>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// A page table needs the key counts: without them the last page's valid rows are unknown.
func.func @table_without_lens(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x16x128xbf16>,
                              %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op a paged cache needs kv_lens (the number of keys of each sequence)}}
  %o = attn.attention %q, %k, %v page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// The table is [batch, max_pages]: a flat list of pages is rejected.
func.func @table_rank1(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x16x128xbf16>,
                       %lens: tensor<2xi32>, %pages: tensor<64xi32>) {
  // expected-error @+1 {{'attn.attention' op the page table must be i32 [batch, max_pages] with the query's batch size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<64xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// ...and has one row per sequence of the query.
func.func @table_batch(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x16x128xbf16>,
                       %lens: tensor<2xi32>, %pages: tensor<4x32xi32>) {
  // expected-error @+1 {{'attn.attention' op the page table must be i32 [batch, max_pages] with the query's batch size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<4x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// K and V index the same pages: 64 key pages against 32 value pages is rejected.
func.func @pages_differ(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<32x2x16x128xbf16>,
                        %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op key and value must have the same number of pages}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<32x2x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// ...with the same heads...
func.func @heads_differ(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x4x16x128xbf16>,
                        %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op key and value must have the same number of heads and page size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x4x16x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// ...and the same page size.
func.func @page_size_differs(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x32x128xbf16>,
                             %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op key and value must have the same number of heads and page size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x32x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// A static page size on one side only is not the same page size either.
func.func @page_size_half_dynamic(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x16x128xbf16>, %v: tensor<64x2x?x128xbf16>,
                                  %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op key and value must have the same number of heads and page size}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x16x128xbf16>, tensor<64x2x?x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// The page size must be static (the kernel's block size is chosen from it).
func.func @page_size_dynamic(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x?x128xbf16>, %v: tensor<64x2x?x128xbf16>,
                             %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op the page size (dimension 2 of key and value) must be static, a multiple of 16 and at most 256, got ?}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x?x128xbf16>, tensor<64x2x?x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// ...a multiple of 16...
func.func @page_size_24(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x24x128xbf16>, %v: tensor<64x2x24x128xbf16>,
                        %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op the page size (dimension 2 of key and value) must be static, a multiple of 16 and at most 256, got 24}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x24x128xbf16>, tensor<64x2x24x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// ...and at most 256.
func.func @page_size_512(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x512x128xbf16>, %v: tensor<64x2x512x128xbf16>,
                         %lens: tensor<2xi32>, %pages: tensor<2x32xi32>) {
  // expected-error @+1 {{'attn.attention' op the page size (dimension 2 of key and value) must be static, a multiple of 16 and at most 256, got 512}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x32xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x512x128xbf16>, tensor<64x2x512x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// max_pages x page_size is the longest sequence: 2^20 pages of 256 keys is 2^28 keys, one more than
// the generated kernels' index arithmetic holds (2^28 - 1).
func.func @table_too_long(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x256x128xbf16>, %v: tensor<64x2x256x128xbf16>,
                          %lens: tensor<2xi32>, %pages: tensor<2x1048576xi32>) {
  // expected-error @+1 {{'attn.attention' op the page table holds 268435456 keys per sequence, more than 268435455}}
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x1048576xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x256x128xbf16>, tensor<64x2x256x128xbf16> -> tensor<2x8x1x128xbf16>
  return
}

// -----

// One page fewer per sequence fits.
// CHECK-LABEL: func.func @table_longest
// CHECK: page_table(%{{.*}} : tensor<2x1048575xi32>)
func.func @table_longest(%q: tensor<2x8x1x128xbf16>, %k: tensor<64x2x256x128xbf16>, %v: tensor<64x2x256x128xbf16>,
                         %lens: tensor<2xi32>, %pages: tensor<2x1048575xi32>) -> tensor<2x8x1x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<2xi32>) page_table(%pages : tensor<2x1048575xi32>)
      : tensor<2x8x1x128xbf16>, tensor<64x2x256x128xbf16>, tensor<64x2x256x128xbf16> -> tensor<2x8x1x128xbf16>
  return %o : tensor<2x8x1x128xbf16>
}
