"""The modifiers of attention_bench.py's --score-mods, apart from torch so that they can be tested
anywhere: `none`, `softcap=C` (scores C tanh(s / C)) and `window=L` (keys at most L before the query;
with the causal flag, none after it). `pairs` counts the (query, key) pairs a modifier keeps, which
the benchmark's TFLOP/s count.

    python3 bench/score_mods.py window=3 --seqlen 10 --causal 1   # the kept pairs, formula and by brute force
"""
import argparse
import sys


class ScoreMod:
    """A modifier of the speed sweep (--score-mods): `none`, `softcap=C` or `window=L`."""

    def __init__(self, text):
        self.name, self.softcap, self.window = text, 0.0, -1
        what, _, value = text.partition("=")
        if what == "softcap" and float(value) > 0:
            self.softcap = float(value)
        elif what == "window" and int(value) >= 0:
            self.window = int(value)
        elif text != "none":
            raise argparse.ArgumentTypeError(f"score mod '{text}': none, softcap=C (C > 0) or window=L (L >= 0)")

    def __bool__(self):
        return self.name != "none"

    def kind(self, kind):
        return f"{kind}+{self.name}" if self else kind

    def pairs(self, s, causal):
        """(query, key) pairs computed: the benchmark's S^2 (halved when causal) without a window, else
        those the window keeps."""
        if self.window < 0:
            return s * s / (2 if causal else 1)
        w = self.window
        if causal:
            return sum(min(q, w) + 1 for q in range(s))
        return sum(s - max(0, q - w) for q in range(s))


def brute_pairs(mod, s, causal):
    """The kept pairs counted one by one (window only; without one the benchmark's convention)."""
    if mod.window < 0:
        return mod.pairs(s, causal)
    return sum(1 for q in range(s) for k in range(s)
               if q - k <= mod.window and (not causal or k <= q))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mod", type=ScoreMod)
    p.add_argument("--seqlen", type=int, default=16)
    p.add_argument("--causal", type=int, default=0)
    args = p.parse_args()
    mod = args.mod
    print(f"{mod.name}: kind {mod.kind('backward')}, softcap {mod.softcap}, window {mod.window}, "
          f"pairs {mod.pairs(args.seqlen, bool(args.causal)):g}, counted {brute_pairs(mod, args.seqlen, bool(args.causal)):g}")


if __name__ == "__main__":
    sys.exit(main())
