//===- KvCache.cpp - flare::appendKV: new K/V rows into a paged cache ------===//
//
// Decoding appends each step's keys and values to the cache before attending to it. The kernel is
// written in the tile dialect (kvAppendModule): program (i, h, b) copies new row i of KV head h of
// sequence b to position kvLens[b] + i of that sequence, i.e. row (kvLens[b] + i) mod page_size of
// page pageTable[b][(kvLens[b] + i) / page_size], for K and for V. A position past the table or a
// page id outside the cache writes nothing (the store's view ends at the cache's last row).
//
//===----------------------------------------------------------------------===//
#include "AttentionInternal.h"

#include "flare/Attention.h"
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"

#include <sstream>

namespace flare {

std::string kvAppendModule(DType dtype, int64_t headDim) {
  const std::string e = dtypeName(dtype), p = "!tile.ptr<" + e + ">", d = std::to_string(headDim);
  std::ostringstream os;
  os << "// flare::appendKV: new K/V row i of (KV head h, sequence b) at position kvLens[b] + i of the\n"
        "// sequence in a paged cache. Grid (new rows, Hkv, B).\n"
     << "func.func @flare_kv_append(%kn: " << p << ", %vn: " << p << ", %kc: " << p << ", %vc: " << p
     << ", %lens: !tile.ptr<i32>, %table: !tile.ptr<i32>,\n"
        "    %rows: i32, %page_size: i32, %table_stride: i32, %max_pages: i32, %page_rows: i32, %num_pages: i32,\n"
        "    %knb: i64, %knh: i64, %knr: i64, %vnb: i64, %vnh: i64, %vnr: i64, %kch: i64, %kcr: i64,\n"
        "    %vch: i64, %vcr: i64)\n"
        "    attributes {tile.kernel, tile.num_warps = 1 : i32} {\n"
        "  %c0 = arith.constant 0 : i32\n"
        "  %c1 = arith.constant 1 : i32\n"
        "  %cd = arith.constant "
     << d
     << " : i32\n"
        "  %i = tile.program_id x\n"
        "  %h = tile.program_id y\n"
        "  %b = tile.program_id z\n"
        "  // The destination: row pos mod page_size of the sequence's page pos / page_size.\n"
        "  %len = tile.scalar_load %lens[%b] : !tile.ptr<i32>, i32 -> i32\n"
        "  %pos = arith.addi %len, %i : i32\n"
        "  %slot = arith.divui %pos, %page_size : i32\n"
        "  %within = arith.remui %pos, %page_size : i32\n"
        "  %b64 = arith.extsi %b : i32 to i64\n"
        "  %h64 = arith.extsi %h : i32 to i64\n"
        "  %ts = arith.extsi %table_stride : i32 to i64\n"
        "  %trow_off = arith.muli %b64, %ts : i64\n"
        "  %trow = tile.addptr %table, %trow_off : !tile.ptr<i32>, i64\n"
        "  %in_table = arith.cmpi ult, %slot, %max_pages : i32\n"
        "  %safe_slot = arith.select %in_table, %slot, %c0 : i32\n"
        "  %page = tile.scalar_load %trow[%safe_slot] : !tile.ptr<i32>, i32 -> i32\n"
        "  %in_cache = arith.cmpi ult, %page, %num_pages : i32\n"
        "  %ok = arith.andi %in_table, %in_cache : i1\n"
        "  %first = arith.muli %page, %page_rows : i32\n"
        "  %row = arith.addi %first, %within : i32\n"
        "  %cache_rows = arith.muli %num_pages, %page_rows : i32\n"
        "  %dst = arith.select %ok, %row, %cache_rows : i32\n";
  // K, then V: the new row through a view of the sequence's new rows, stored through a view of the
  // head's rows of every page.
  for (const char *t : {"k", "v"}) {
    const std::string n = std::string("%") + t;
    os << "  " << n << "_src_b = arith.muli %b64, " << n << "nb : i64\n"
       << "  " << n << "_src_h = arith.muli %h64, " << n << "nh : i64\n"
       << "  " << n << "_src_off = arith.addi " << n << "_src_b, " << n << "_src_h : i64\n"
       << "  " << n << "_src = tile.addptr " << n << "n, " << n << "_src_off : " << p << ", i64\n"
       << "  " << n << "_src_rs = arith.trunci " << n << "nr : i64 to i32\n"
       << "  " << n << "_sv = tile.make_view " << n << "_src, [%rows, %cd], [" << n << "_src_rs, %c1] : " << p
       << " -> !tile.view<" << e << ", 2>\n"
       << "  " << n << "_x = tile.load " << n << "_sv[%i, %c0] : !tile.view<" << e << ", 2> -> tensor<1x" << d << "x"
       << e << ">\n"
       << "  " << n << "_dst_h = arith.muli %h64, " << n << "ch : i64\n"
       << "  " << n << "_dst = tile.addptr " << n << "c, " << n << "_dst_h : " << p << ", i64\n"
       << "  " << n << "_dst_rs = arith.trunci " << n << "cr : i64 to i32\n"
       << "  " << n << "_dv = tile.make_view " << n << "_dst, [%cache_rows, %cd], [" << n << "_dst_rs, %c1] : " << p
       << " -> !tile.view<" << e << ", 2>\n"
       << "  tile.store " << n << "_x, " << n << "_dv[%dst, %c0] : tensor<1x" << d << "x" << e << ">, !tile.view<" << e
       << ", 2>\n";
  }
  os << "  return\n}\n";
  return os.str();
}

KvAppendPlan planKvAppend(const TensorView &kNew, const TensorView &vNew, const TensorView &kCache,
                          const TensorView &vCache, const TensorView &kvLens, const TensorView &pageTable) {
  detail::checkKvAppend(kNew, vNew, kCache, vCache, kvLens, pageTable);
  KvAppendPlan plan;
  plan.module = kvAppendModule(kNew.dtype, kNew.shape[3]);
  plan.kernelName = "flare_kv_append";
  const std::vector<int64_t> kn = kNew.effectiveStrides(), vn = vNew.effectiveStrides(),
                             kc = kCache.effectiveStrides(), vc = vCache.effectiveStrides(),
                             ts = pageTable.effectiveStrides();
  const int64_t pageRows = kc[0] / kc[2]; // checkCacheTensors: V's strides are K's
  plan.args.addPointer(kNew.data).addPointer(vNew.data).addPointer(kCache.data).addPointer(vCache.data);
  plan.args.addPointer(kvLens.data).addPointer(pageTable.data);
  for (int64_t x : {kNew.shape[2], kCache.shape[2], ts[0], pageTable.shape[1], pageRows, kCache.shape[0]})
    plan.args.addI32(static_cast<int32_t>(x));
  for (int64_t x : {kn[0], kn[1], kn[2], vn[0], vn[1], vn[2], kc[1], kc[2], vc[1], vc[2]})
    plan.args.addI64(x);
  plan.grid = {static_cast<unsigned>(kNew.shape[2]), static_cast<unsigned>(kNew.shape[1]),
               static_cast<unsigned>(kNew.shape[0])};
  return plan;
}

void appendKV(rt::KernelCache &cache, const TensorView &kNew, const TensorView &vNew, const TensorView &kCache,
              const TensorView &vCache, const TensorView &kvLens, const TensorView &pageTable, void *stream,
              const std::string &arch) {
  const KvAppendPlan plan = planKvAppend(kNew, vNew, kCache, vCache, kvLens, pageTable);
  CompileOptions compile;
  compile.arch = arch;
  rt::Kernel kernel = cache.getOrCompile(plan.module, compile, "<flare::appendKV>")->kernel(plan.kernelName);
  kernel.launch(plan.grid, plan.args, stream);
}

} // namespace flare
