//===- AttnDialect.h - The attention dialect --------------------*- C++ -*-===//
#ifndef FLARE_DIALECT_ATTN_ATTNDIALECT_H
#define FLARE_DIALECT_ATTN_ATTNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Attn/AttnDialect.h.inc"
#include "Attn/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Attn/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "Attn/AttnOps.h.inc"

#endif // FLARE_DIALECT_ATTN_ATTNDIALECT_H
