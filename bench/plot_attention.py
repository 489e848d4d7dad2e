"""Plots a CSV of attention_bench.py as SVG (no dependencies): per kind of call (forward, backward,
forward + backward), TFLOP/s versus sequence length, one panel per (head dim, causal), one line per
method; and peak extra memory versus sequence length (log scale), of the forward and of the backward.
Also writes a markdown table of the speed rows of each kind, then of every speed target of the
benchmark's setup (the least TFLOP/s and the ratio to the best peer of the same run) met or missed.

    python3 plot_attention.py results/2026-11-29-attention-h200.csv results/2026-11-29-attention-h200
    -> ...-speed.svg (forward), ...-backward.svg, ...-fwdbwd.svg, ...-memory.svg, ...-memory-backward.svg,
       ...-table.md
"""
import csv
import math
import re
import sys

COLORS = {"flare": "#d62728", "sdpa-cudnn": "#1f77b4", "sdpa-flash": "#2ca02c", "sdpa-efficient": "#9467bd",
          "flex": "#ff7f0e", "naive": "#7f7f7f", "sdpa-math": "#7f7f7f", "flare-nosplit": "#e377c2",
          "device-copy": "#bbbbbb", "flare-paged16": "#8c564b", "flare-paged64": "#bcbd22",
          "flare-paged256": "#17becf", "flare-varlen": "#d62728", "flare-equal": "#e377c2",
          "sdpa-cudnn-equal": "#1f77b4", "flex-document": "#ff7f0e"}

# Packed variable-length prefill against the equal-length forward of the same tokens (issue's target).
VARLEN_TARGET = 0.95


# The speed issue's forward targets (bf16, H200, 16k tokens, hidden 2048), each against the best peer
# of the same run: (name, head dim, causal, seqlens, least TFLOP/s, least ratio to the best peer).
TARGETS = [
    ("head dim 128, non-causal, 4k-16k", 128, 0, (4096, 8192, 16384), 690.0, 1.1),
    ("head dim 128, causal, 4k-16k", 128, 1, (4096, 8192, 16384), 640.0, 1.1),
    ("head dim 64, 4k-16k", 64, 0, (4096, 8192, 16384), 540.0, 1.1),
    ("head dim 256, 4k-16k", 256, 0, (4096, 8192, 16384), 760.0, None),
] + [(f"short sequences, head dim {d}{', causal' if c else ''}", d, c, (512, 1024), None, 1.0)
     for d in (64, 128, 256) for c in (0, 1)]

# The backward pass's targets (bench/NOTES.md, "Backward pass"), in the same form.
BACKWARD_TARGETS = [
    ("backward, head dim 128, non-causal, 4k-16k", 128, 0, (4096, 8192, 16384), 600.0, 1.1),
    ("backward, head dim 128, causal, 4k-16k", 128, 1, (4096, 8192, 16384), 560.0, None),
    ("backward, head dim 64, 4k-16k", 64, 0, (4096, 8192, 16384), 520.0, 1.1),
    ("backward, head dim 256, 4k-16k", 256, 0, (4096, 8192, 16384), 560.0, None),
]
# Rows of each kind of call (older CSVs call the forward's rows "speed"), with their chart's file suffix
# and title.
KINDS = [(("speed", "forward"), "speed", "Attention forward"), (("backward",), "backward", "Attention backward"),
         (("fwdbwd",), "fwdbwd", "Attention forward + backward")]


def is_peer(method):
    """The methods Flare is measured against: every one but Flare's own (tuned, autotuned) and naive."""
    return not method.startswith("flare") and method != "naive"


def target_rows(speed, targets=TARGETS):
    """One row per target and sequence length present in `speed`: (target, seqlen, flare, best peer and
    its value, ratio, 'met' / 'missed')."""
    rows = []
    for name, d, causal, seqlens, least, ratio in targets:
        for s in seqlens:
            at = [r for r in speed if int(r["hdim"]) == d and int(r["causal"]) == causal and int(r["seqlen"]) == s
                  and num(r["tflops"])]
            flare = [num(r["tflops"]) for r in at if r["method"] == "flare"]
            peers = sorted(((num(r["tflops"]), r["method"]) for r in at if is_peer(r["method"])), reverse=True)
            if not flare or not peers:
                continue
            f, (best, peer) = flare[0], peers[0]
            met = (least is None or f >= least) and (ratio is None or f >= ratio * best)
            rows.append((name, s, f, peer, best, f / best, "met" if met else "missed"))
    return rows


def num(x):
    try:
        v = float(x)
        return None if math.isnan(v) else v
    except ValueError:
        return None


class Panel:
    """One chart: x is log2(seqlen), y linear or log10, in a w x h box at (ox, oy)."""

    def __init__(self, out, ox, oy, w, h, title, xs, ymax, ylabel, logy=False, ymin=None):
        self.out, self.ox, self.oy, self.w, self.h = out, ox, oy, w, h
        self.xs, self.logy = xs, logy
        self.ymin = ymin if ymin is not None else 0.0
        self.ymax = ymax
        out.append(f'<rect x="{ox}" y="{oy}" width="{w}" height="{h}" fill="none" stroke="#999"/>')
        out.append(f'<text x="{ox + w / 2}" y="{oy - 8}" text-anchor="middle" font-size="13">{title}</text>')
        out.append(f'<text x="{ox - 42}" y="{oy + h / 2}" font-size="11" transform="rotate(-90 {ox - 42} {oy + h / 2})" '
                   f'text-anchor="middle">{ylabel}</text>')
        for x in xs:
            px = self.px(x)
            label = f"{x // 1024}k" if x >= 1024 else str(x)
            out.append(f'<text x="{px}" y="{oy + h + 14}" text-anchor="middle" font-size="10">{label}</text>')
        for t in self.yticks():
            py = self.py(t)
            out.append(f'<line x1="{ox}" x2="{ox + w}" y1="{py}" y2="{py}" stroke="#eee"/>')
            out.append(f'<text x="{ox - 4}" y="{py + 3}" text-anchor="end" font-size="10">{t:g}</text>')

    def yticks(self):
        if self.logy:
            lo, hi = math.floor(math.log10(self.ymin)), math.ceil(math.log10(self.ymax))
            return [10.0 ** e for e in range(lo, hi + 1)]
        step = 10 ** math.floor(math.log10(max(self.ymax, 1))) / 2
        while self.ymax / step > 8:
            step *= 2
        return [i * step for i in range(int(self.ymax / step) + 1)]

    def px(self, x):
        lo, hi = math.log2(self.xs[0]), math.log2(self.xs[-1])
        return self.ox + 20 + (math.log2(x) - lo) / max(hi - lo, 1e-9) * (self.w - 40)

    def py(self, y):
        if self.logy:
            lo, hi = math.log10(self.ymin), math.log10(self.ymax)
            f = (math.log10(max(y, self.ymin)) - lo) / (hi - lo)
        else:
            f = (y - self.ymin) / (self.ymax - self.ymin)
        return self.oy + self.h - f * self.h

    def line(self, points, color):
        pts = " ".join(f"{self.px(x):.1f},{self.py(y):.1f}" for x, y in points)
        self.out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in points:
            self.out.append(f'<circle cx="{self.px(x):.1f}" cy="{self.py(y):.1f}" r="2.5" fill="{color}"/>')


def legend(out, x, y, methods):
    for i, m in enumerate(methods):
        out.append(f'<rect x="{x}" y="{y + i * 16}" width="12" height="3" fill="{COLORS.get(m, "#000")}"/>')
        out.append(f'<text x="{x + 18}" y="{y + i * 16 + 5}" font-size="11">{m}</text>')


def svg(out, width, height, title):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">'
            f'<rect width="100%" height="100%" fill="white"/><text x="{width / 2}" y="20" text-anchor="middle" '
            f'font-size="15">{title}</text>' + "".join(out) + "</svg>\n")


def speed_chart(speed, prefix, title, subtitle):
    panels = sorted({(int(r["hdim"]), int(r["causal"])) for r in speed})
    methods = sorted({r["method"] for r in speed}, key=lambda m: list(COLORS).index(m) if m in COLORS else 99)
    out = []
    cols = 2
    pw, ph = 360, 230
    for i, (d, causal) in enumerate(panels):
        sel = [r for r in speed if int(r["hdim"]) == d and int(r["causal"]) == causal]
        xs = sorted({int(r["seqlen"]) for r in sel})
        ymax = max([num(r["tflops"]) or 0 for r in sel] + [100]) * 1.1
        p = Panel(out, 70 + (i % cols) * (pw + 90), 60 + (i // cols) * (ph + 70), pw, ph,
                  f"head dim {d}{', causal' if causal else ''}", xs, ymax, "TFLOP/s")
        for m in methods:
            pts = [(int(r["seqlen"]), num(r["tflops"])) for r in sel if r["method"] == m and num(r["tflops"])]
            if pts:
                p.line(sorted(pts), COLORS.get(m, "#000"))
    rows_n = (len(panels) + cols - 1) // cols
    legend(out, 70 + cols * (pw + 90) - 60, 70, methods)
    with open(prefix, "w") as f:
        f.write(svg(out, 70 + cols * (pw + 90) + 80, 60 + rows_n * (ph + 70), f"{title}, bf16, 16k tokens, "
                    "hidden 2048: " + subtitle))
    return panels, methods


def memory_chart(memory, path, title, subtitle):
    methods = sorted({r["method"] for r in memory}, key=lambda m: list(COLORS).index(m) if m in COLORS else 99)
    d, h = memory[0]["hdim"], memory[0]["heads"]
    out = []
    xs = sorted({int(r["seqlen"]) for r in memory})
    vals = [num(r["peak_extra_mib"]) for r in memory if num(r["peak_extra_mib"])]
    p = Panel(out, 80, 60, 520, 300, f"peak extra device memory (batch 1, {h} heads, head dim {d})", xs,
              max(vals) * 2, "MiB (log scale)", logy=True, ymin=max(min(vals) / 2, 0.1))
    for m in methods:
        pts = [(int(r["seqlen"]), num(r["peak_extra_mib"])) for r in memory if r["method"] == m and
               num(r["peak_extra_mib"])]
        if pts:
            p.line(sorted(pts), COLORS.get(m, "#000"))
        for r in memory:
            if r["method"] == m and "out of memory" in r["note"]:
                x = p.px(int(r["seqlen"]))
                out.append(f'<text x="{x}" y="{p.oy + 14}" text-anchor="middle" font-size="10" '
                           f'fill="{COLORS.get(m, "#000")}">{m}: OOM</text>')
    legend(out, 620, 70, methods)
    with open(path, "w") as f:
        f.write(svg(out, 720, 400, f"{title} versus sequence length: " + subtitle))
    return methods


def decode_chart(decode, path, subtitle):
    """Bandwidth of the K and V read versus keys, one panel per batch, one line per method, the device's
    copy bandwidth as a grey line."""
    rows = [r for r in decode if r["method"] != "device-copy"]
    copy = [num(r["tbps"]) for r in decode if r["method"] == "device-copy" and num(r["tbps"])]
    batches = sorted({int(r["batch"]) for r in rows})
    methods = sorted({r["method"] for r in rows}, key=lambda m: list(COLORS).index(m) if m in COLORS else 99)
    out = []
    cols, pw, ph = 2, 360, 230
    ymax = max([num(r["tbps"]) or 0 for r in rows] + copy + [1]) * 1.1
    for i, b in enumerate(batches):
        sel = [r for r in rows if int(r["batch"]) == b]
        xs = sorted({int(r["seqlen"]) for r in sel})
        p = Panel(out, 70 + (i % cols) * (pw + 90), 60 + (i // cols) * (ph + 70), pw, ph,
                  f"batch {b}, {sel[0]['heads']} heads", xs, ymax, "TB/s of K and V")
        if copy:
            p.line([(xs[0], copy[0]), (xs[-1], copy[0])], "#bbbbbb")
        for m in methods:
            pts = [(int(r["seqlen"]), num(r["tbps"])) for r in sel if r["method"] == m and num(r["tbps"])]
            if pts:
                p.line(sorted(pts), COLORS.get(m, "#000"))
    rows_n = (len(batches) + cols - 1) // cols
    legend(out, 70 + cols * (pw + 90) - 60, 70, methods + (["device-copy"] if copy else []))
    with open(path, "w") as f:
        f.write(svg(out, 70 + cols * (pw + 90) + 80, 60 + rows_n * (ph + 70),
                    "Decoding (one query, head dim 128): bandwidth versus keys: " + subtitle))
    return batches, methods, copy


def varlen_chart(varlen, path, subtitle):
    """TFLOP/s over the kept elements versus head dim, one line per method."""
    methods = sorted({r["method"] for r in varlen}, key=lambda m: list(COLORS).index(m) if m in COLORS else 99)
    hdims = sorted({int(r["hdim"]) for r in varlen})
    out = []
    ymax = max([num(r["tflops"]) or 0 for r in varlen] + [1]) * 1.1
    p = Panel(out, 70, 60, 420, 260, "causal prefill, packed sequences", hdims, ymax, "TFLOP/s (kept elements)")
    for m in methods:
        pts = [(int(r["hdim"]), num(r["tflops"])) for r in varlen if r["method"] == m and num(r["tflops"])]
        if pts:
            p.line(sorted(pts), COLORS.get(m, "#000"))
    legend(out, 520, 70, methods)
    with open(path, "w") as f:
        f.write(svg(out, 700, 360, "Variable-length batches (x: head dim): " + subtitle))
    return hdims, methods


def main(path, prefix):
    rows = list(csv.DictReader(open(path)))
    head = rows[0] if rows else {}
    subtitle = f'{head.get("gpu", "")}, {head.get("date", "")}, commit {head.get("commit", "")}'
    written = []
    # The rows of attention_bench.py --score-mods (kind KIND+MOD): a chart and a table each, after the
    # plain kinds'.
    names = {"forward": "forward", "backward": "backward", "fwdbwd": "forward + backward"}
    modified = sorted({r["kind"] for r in rows if "+" in r["kind"] and r["kind"].split("+")[0] in names})
    sections = KINDS + [((k,), re.sub(r"[^a-z0-9]+", "-", k), f"Attention {names[k.split('+')[0]]} under "
                         f"{k.split('+', 1)[1]}") for k in modified]
    with open(prefix + "-table.md", "w") as table:
        for kinds, suffix, title in sections:
            speed = [r for r in rows if r["kind"] in kinds]
            if not speed:
                continue
            panels, methods = speed_chart(speed, f"{prefix}-{suffix}.svg", title, subtitle)
            written.append(f"{prefix}-{suffix}.svg")
            table.write(f"{title}, TFLOP/s ({subtitle})\n\n| head dim | causal | seqlen | " + " | ".join(methods) + " |\n")
            table.write("|---|---|---|" + "---|" * len(methods) + "\n")
            for d, causal in panels:
                for s in sorted({int(r["seqlen"]) for r in speed if int(r["hdim"]) == d}):
                    cells = []
                    for m in methods:
                        hit = [r for r in speed if int(r["hdim"]) == d and int(r["causal"]) == causal and
                               int(r["seqlen"]) == s and r["method"] == m]
                        cells.append(hit[0]["tflops"] if hit and num(hit[0]["tflops"]) else "-")
                    table.write(f"| {d} | {'yes' if causal else 'no'} | {s} | " + " | ".join(cells) + " |\n")
            targets = {"speed": TARGETS, "backward": BACKWARD_TARGETS}.get(suffix, [])
            met = target_rows(speed, targets)
            if met:
                table.write("\nTargets (least TFLOP/s and ratio to the best peer of this run; bench/NOTES.md has the "
                            "setup)\n\n| target | seqlen | flare | best peer | ratio | |\n|---|---|---|---|---|---|\n")
                for name, s, fl, peer, best, ratio, verdict in met:
                    table.write(f"| {name} | {s} | {fl:.1f} | {peer} {best:.1f} | {ratio:.2f}x | {verdict} |\n")
            table.write("\n")
        # The decoding chart at head dim 128 (the sweep's default) where a run has several.
        decode = [r for r in rows if r["kind"] == "decode"]
        if len({r["hdim"] for r in decode}) > 1:
            decode = [r for r in decode if r["hdim"] == "128"]
        if decode:
            batches, methods, copy = decode_chart(decode, f"{prefix}-decode.svg", subtitle)
            written.append(f"{prefix}-decode.svg")
            table.write(f"Decoding, TB/s of K and V read ({subtitle}; device copy "
                        f"{copy[0] if copy else '-'} TB/s)\n\n| batch | keys | " + " | ".join(methods) + " |\n")
            table.write("|---|---|" + "---|" * len(methods) + "\n")
            for b in batches:
                for s in sorted({int(r["seqlen"]) for r in decode if r["seqlen"] and int(r["batch"]) == b}):
                    cells = []
                    for m in methods:
                        hit = [r for r in decode if r["method"] == m and r["seqlen"] and int(r["batch"]) == b and
                               int(r["seqlen"]) == s]
                        cells.append(hit[0]["tbps"] if hit and num(hit[0]["tbps"]) else "-")
                    table.write(f"| {b} | {s} | " + " | ".join(cells) + " |\n")
            table.write("\n")
        varlen = [r for r in rows if r["kind"] == "varlen"]
        if varlen:
            hdims, methods = varlen_chart(varlen, f"{prefix}-varlen.svg", subtitle)
            written.append(f"{prefix}-varlen.svg")
            table.write(f"Variable-length batches, TFLOP/s over the kept elements ({subtitle})\n\n| head dim | "
                        "sequences | " + " | ".join(methods) + " |\n|---|---|" + "---|" * len(methods) + "\n")
            verdicts = []
            for d in hdims:
                cell = {r["method"]: r for r in varlen if int(r["hdim"]) == d}
                table.write(f"| {d} | {next(iter(cell.values()))['batch']} | " +
                            " | ".join(cell[m]["tflops"] if m in cell and num(cell[m]["tflops"]) else "-"
                                       for m in methods) + " |\n")
                packed = num(cell["flare-varlen"]["tflops"]) if "flare-varlen" in cell else None
                equal = num(cell["flare-equal"]["tflops"]) if "flare-equal" in cell else None
                if packed and equal:
                    ratio = packed / equal
                    verdicts.append(f"| head dim {d} | {packed:.1f} | {equal:.1f} | {ratio:.2f}x | "
                                    f"{'met' if ratio >= VARLEN_TARGET else 'missed'} |\n")
            if verdicts:
                table.write(f"\nTarget: packed at least {VARLEN_TARGET:.2f}x the equal-length forward\n\n"
                            "| | flare-varlen | flare-equal | ratio | |\n|---|---|---|---|---|\n" + "".join(verdicts))
            table.write("\n")
        for kind, title in (("memory", "Forward memory"), ("memory-backward", "Backward memory")):
            memory = [r for r in rows if r["kind"] == kind]
            if not memory:
                continue
            methods = memory_chart(memory, f"{prefix}-{kind}.svg", title, subtitle)
            written.append(f"{prefix}-{kind}.svg")
            table.write(f"{title}: peak extra MiB (batch 1, {memory[0]['heads']} heads, head dim {memory[0]['hdim']})"
                        "\n\n| seqlen | " + " | ".join(methods) + " |\n|---|" + "---|" * len(methods) + "\n")
            for s in sorted({int(r["seqlen"]) for r in memory}):
                cell = {}
                for r in memory:
                    if int(r["seqlen"]) == s:
                        cell[r["method"]] = r["peak_extra_mib"] if num(r["peak_extra_mib"]) is not None else r["note"]
                table.write(f"| {s} | " + " | ".join(cell.get(m, "-") for m in methods) + " |\n")
            table.write("\n")
    print("wrote " + ", ".join(written + [prefix + "-table.md"]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
