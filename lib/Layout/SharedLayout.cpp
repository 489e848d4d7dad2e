//===- SharedLayout.cpp - Shared-memory tile layouts and wgmma descriptors ===//
#include "flare/Layout/SharedLayout.h"

namespace flare {

namespace {
constexpr uint64_t kField14 = 0x3FFF;
constexpr unsigned kStartShift = 0, kLeadingShift = 16, kStrideShift = 32, kBaseShift = 49, kModeShift = 62;
} // namespace

uint64_t WgmmaDescriptor::encode() const {
  uint64_t d = 0;
  d |= (uint64_t(startAddress >> 4) & kField14) << kStartShift;
  d |= (uint64_t(leadingByteOffset >> 4) & kField14) << kLeadingShift;
  d |= (uint64_t(strideByteOffset >> 4) & kField14) << kStrideShift;
  d |= (uint64_t(baseOffset) & 7) << kBaseShift;
  d |= (uint64_t(static_cast<unsigned>(swizzle)) & 3) << kModeShift;
  return d;
}

WgmmaDescriptor WgmmaDescriptor::decode(uint64_t bits) {
  WgmmaDescriptor d;
  d.startAddress = static_cast<uint32_t>(((bits >> kStartShift) & kField14) << 4);
  d.leadingByteOffset = static_cast<uint32_t>(((bits >> kLeadingShift) & kField14) << 4);
  d.strideByteOffset = static_cast<uint32_t>(((bits >> kStrideShift) & kField14) << 4);
  d.baseOffset = static_cast<unsigned>((bits >> kBaseShift) & 7);
  d.swizzle = static_cast<SmemSwizzle>((bits >> kModeShift) & 3);
  return d;
}

bool WgmmaDescriptor::valid() const {
  auto fits = [](uint32_t bytes) { return bytes % 16 == 0 && (bytes >> 4) <= kField14; };
  return fits(startAddress) && fits(leadingByteOffset) && fits(strideByteOffset) && baseOffset < 8;
}

int64_t coreMatrixOffset(int64_t row, int64_t col, int64_t cols, bool transposed) {
  int64_t rIn = row % 8, cIn = col % 8;
  if (transposed) {
    int64_t t = rIn;
    rIn = cIn;
    cIn = t;
  }
  return (row / 8) * 16 * cols + (col / 8) * 128 + rIn * 16 + cIn * 2;
}

int64_t swizzle(int64_t byteOffset, SmemSwizzle mode) {
  // Swizzle<B, 4, 3>: B = 3, 2, 1 for 128, 64, 32 bytes.
  const int bits = mode == SmemSwizzle::B128 ? 3 : mode == SmemSwizzle::B64 ? 2 : mode == SmemSwizzle::B32 ? 1 : 0;
  const int64_t mask = ((int64_t(1) << bits) - 1) << (4 + 3);
  return byteOffset ^ ((byteOffset & mask) >> 3);
}

int64_t swizzledOffset(int64_t row, int64_t col, int64_t rows, int64_t elemBytes, SmemSwizzle mode) {
  const int64_t width = swizzleBytes(mode);
  const int64_t perPanel = width / elemBytes; // columns of one panel
  const int64_t panel = col / perPanel, inPanel = col % perPanel;
  const int64_t linear = panel * rows * width + row * width + inPanel * elemBytes;
  return swizzle(linear, mode);
}

WgmmaDescriptor swizzledOperandDescriptor(int64_t rows, bool mnMajor) {
  constexpr int64_t kRow = 128, kAtom = 8 * kRow;
  WgmmaDescriptor d;
  d.swizzle = SmemSwizzle::B128;
  d.strideByteOffset = static_cast<uint32_t>(kAtom);
  d.leadingByteOffset = static_cast<uint32_t>(mnMajor ? rows * kRow : 16);
  return d;
}

int64_t swizzledKStepOffset(int64_t kStep, int64_t rows, bool mnMajor) {
  constexpr int64_t kRow = 128, kPanel = 64;
  if (mnMajor)
    return kStep * 16 * kRow;
  const int64_t col = kStep * 16;
  return (col / kPanel) * rows * kRow + (col % kPanel) * 2;
}

} // namespace flare
