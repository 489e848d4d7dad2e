// tgpu-allocate-shared-memory: a kernel's tgpu.shared_area ops follow one another in program order,
// each at the next multiple of its alignment, and become their byte offsets; the total is the kernel's
// tgpu.shared_bytes. A kernel over max-shared-bytes is an error at its largest area.
// RUN: flare-opt %s -split-input-file --tgpu-allocate-shared-memory=max-shared-bytes=4096 -verify-diagnostics | FileCheck %s

// 100 bytes of scratch at 0; the operands (align 16) at 112; an empty area of alignment 1024 still
// moves on to 1024; 8 bytes of barriers there; the ring (align 128) at 1152, 2048 bytes: 3200 in all.
// CHECK-LABEL: gpu.func @layout
// CHECK-SAME: tgpu.shared_bytes = 3200 : i32
// CHECK-DAG: %[[OPS:.*]] = arith.constant 112 : i32
// CHECK-DAG: %[[BAR:.*]] = arith.constant 1024 : i32
// CHECK-DAG: %[[RING:.*]] = arith.constant 1152 : i32
// CHECK-NOT: tgpu.shared_area
// CHECK: llvm.store %[[OPS]]
// CHECK: llvm.store %[[BAR]]
// CHECK: llvm.store %[[RING]]
gpu.module @kernels {
  gpu.func @layout(%out: !llvm.ptr) kernel {
    %scratch = tgpu.shared_area "scratch" 100 bytes align 1
    %ops = tgpu.shared_area "operands" 16 bytes align 16
    %empty = tgpu.shared_area "persistent operands" 0 bytes align 1024
    %bar = tgpu.shared_area "operand barriers" 8 bytes align 8
    %ring = tgpu.shared_area "rings" 2048 bytes align 128
    llvm.store %ops, %out : i32, !llvm.ptr
    llvm.store %bar, %out : i32, !llvm.ptr
    llvm.store %ring, %out : i32, !llvm.ptr
    gpu.return
  }
}

// -----

// A kernel without areas needs no shared memory; functions that are not kernels are left alone.
// CHECK-LABEL: gpu.func @none
// CHECK-SAME: tgpu.shared_bytes = 0 : i32
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: tgpu.shared_bytes
// CHECK: tgpu.shared_area
gpu.module @kernels {
  gpu.func @none() kernel {
    gpu.return
  }
  gpu.func @helper() -> i32 {
    %a = tgpu.shared_area "scratch" 16 bytes align 16
    gpu.return %a : i32
  }
}

// -----

// 4096 bytes fit exactly.
// CHECK-LABEL: gpu.func @exact
// CHECK-SAME: tgpu.shared_bytes = 4096 : i32
gpu.module @kernels {
  gpu.func @exact() kernel {
    %a = tgpu.shared_area "scratch" 1024 bytes align 1
    %b = tgpu.shared_area "rings" 3072 bytes align 1024
    gpu.return
  }
}

// -----

// One byte more does not: the error names the kernel, the total and the largest area, at its location,
// and lists where the bytes go (each area that holds any, with its offset).
gpu.module @kernels {
  gpu.func @over() kernel {
    %a = tgpu.shared_area "scratch" 1025 bytes align 1
    // expected-error @+1 {{kernel 'over' needs 5120 bytes of shared memory (3072 for this op), more than the 4096 a CTA may use: use smaller tiles or fewer warps (scratch 1025 at 0, rings 3072 at 2048)}}
    %b = tgpu.shared_area "rings" 3072 bytes align 1024
    gpu.return
  }
}
