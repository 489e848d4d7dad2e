//===- main.cpp - flarec --------------------------------------------------===//
#include "flare/Tools/Tools.h"

int main(int argc, char **argv) { return flare::tools::flarecMain(argc, argv); }
