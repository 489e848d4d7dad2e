"""Flare's generated attention kernels next to the best attention kernels of PyTorch, in one process.

Methods, on the same tensors: Flare (flare::attention through the C API, flare/flare_c.h, via ctypes on
torch's device pointers), torch SDPA forced to each backend (FLASH_ATTENTION, CUDNN_ATTENTION,
EFFICIENT_ATTENTION) and FlexAttention (torch.compile) where it compiles. Setup of the FlashAttention
papers: bf16, 16k tokens in total (batch = 16384 / seqlen), hidden 2048 (heads = 2048 / head_dim);
FLOPs = 4 * B * H * S^2 * D, halved when causal. Times: CUDA events around each call after warm-up,
calls queued back to back (time_calls), --iters calls per method in each of --rounds rounds that take the
methods in turn, median of all (--samples-out writes every call's time; --warmup-s runs the shape's
methods in turn for that long first). Long shapes run at the H200's power cap, where the clock a burst
of calls meets varies: bench/power_draw.py measures each method under sustained load instead.

Kinds of call (--kinds, a row's `kind`): `forward`; `backward`, the gradients after one forward (Flare:
flare_attention_backward from the forward's out and LSE; SDPA and FlexAttention: out.backward(dout) on
their own forward's graph), FLOPs 2.5 x the forward's (five matmuls, one recomputing the scores); and
`fwdbwd`, forward then backward (3.5 x). Before timing, Flare's output (poisoned first) is compared with
cuDNN's, and every method's gradients with cuDNN's on the same dout (max |difference| in the note).
With --score-mods, these kinds also run under each modifier (`softcap=C`: C tanh(s / C); `window=L`:
keys at most L before the query, with the causal flag as given), rows of kind `KIND+MOD`: Flare (its
C API options) and FlexAttention (score_mod / mask_mod) only, checked against FlexAttention's output
and gradients (not with --no-peers); TFLOP/s count the kept elements.

The decoding sweep (kind `decode`, its own shapes: one query per sequence, GQA 32:8, head dim 128,
batch 1-64, 1k-128k keys) measures the bandwidth of the K and V read (`tbps`) beside the device's copy
bandwidth of the same run (method `device-copy`); see decode_sweep.

Kind `relpos` (the setup's shapes): a score_mod that reads an aux table per score element, a
relative-position bias table[kv - q], as Flare's compiled modifier, FlexAttention's score_mod and
SDPA's efficient backend with the bias materialised as an [S, S] mask; see relpos_sweep.

Kind `document` (batch 1, 8k-32k tokens): causal document masks over documents of 500-2000 tokens (a
fixed seed), the document ids in an aux tensor (examples/attention/document.mlir). Flare with the block
lists built by each call (`flare`), built once before (`flare-blockmask`, flare_block_mask_build) and
off (`flare-elementwise`, the mask evaluated per element), FlexAttention with a document-causal
BlockMask, and SDPA's cuDNN backend on plain causal attention of the same tensors (`sdpa-cudnn-causal`,
the dense reference point). TFLOP/s count the kept elements (cuDNN's: causal); the times of building the
masks are rows of their own (`flare-mask-build`, `flex-mask-build`); see document_sweep.

Kind `document-backward` (the same documents, 8k and 16k tokens): the backward of the causal document
mask after one forward. Flare's flare_attention_backward with its block lists built by each call
(`flare`), built once before (`flare-blockmask`, flare_block_mask_build_backward) and without them
(`flare-elementwise`), FlexAttention's backward under its BlockMask (autograd), SDPA's cuDNN backward
of plain causal attention (`sdpa-cudnn-causal`); TFLOP/s count 2.5x the forward's FLOPs over the kept
elements (cuDNN's: causal); gradients compared with FlexAttention's; mask builds timed apart
(`flare-mask-build`, `flex-mask-build`); see document_backward_sweep.

Kind `blocksparse` (4k-16k tokens, batch 16384 / seqlen): a table of kept 128 x 128 blocks at densities
0.05, 0.25 and 0.5, about 5% of its block rows empty (examples/attention/block_sparse.mlir). Flare's
block lists per call and prebuilt, Flare's dense forward of the same shape (`flare-dense`: the
flare-blockmask row's note gives the speed-up over it) and FlexAttention's BlockMask; mask build times
as for `document`, the density in the note; see blocksparse_sweep.

The memory sweeps, batch 1, 16 heads, head dim 64, as the sequence grows: the peak extra device memory
of naive attention (examples/tile/naive_attention.mlir: the score matrix through global memory) and of
Flare's forward, until naive attention runs out of memory (kind `memory`); and what one backward call
allocates beyond its inputs and gradients, Flare's and SDPA's backends' (kind `memory-backward`).

    python3 attention_bench.py --lib <bundle>/lib/libflare.so --examples <bundle>/examples --out results/x.csv
"""
import argparse
import ctypes
import datetime
import itertools
import math
import os
import platform
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_mods import ScoreMod  # noqa: E402


class FlareTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4)]


class FlareOptions(ctypes.Structure):
    _fields_ = [("causal", ctypes.c_int32), ("bottom_right", ctypes.c_int32), ("window_left", ctypes.c_int64),
                ("window_right", ctypes.c_int64), ("softcap", ctypes.c_float), ("scale", ctypes.c_float),
                ("lse", FlareTensor), ("module", ctypes.c_char_p), ("num_aux", ctypes.c_int32),
                ("aux", ctypes.POINTER(FlareTensor)), ("block_m", ctypes.c_int32), ("block_n", ctypes.c_int32),
                ("num_warps", ctypes.c_int32), ("overlap", ctypes.c_int32), ("ping_pong", ctypes.c_int32),
                ("producer", ctypes.c_int32), ("persistent", ctypes.c_int32),
                ("autotune", ctypes.c_int32), ("deterministic", ctypes.c_int32), ("kv_splits", ctypes.c_int32),
                ("kv_lens", FlareTensor), ("page_table", FlareTensor), ("cu_seqlens_q", FlareTensor),
                ("cu_seqlens_k", FlareTensor), ("max_seqlen_q", ctypes.c_int64), ("max_seqlen_k", ctypes.c_int64),
                ("block_lists", ctypes.c_int32), ("block_mask", ctypes.c_void_p)]


DTYPES = {torch.bfloat16: 0, torch.float16: 1, torch.float32: 2, torch.int32: 3, torch.int64: 4}


def flare_tensor(t):
    ft = FlareTensor()
    ft.data = t.data_ptr()
    ft.dtype = DTYPES[t.dtype]
    ft.rank = t.dim()
    for i, (n, s) in enumerate(zip(t.shape, t.stride())):
        ft.shape[i] = n
        ft.strides[i] = s
    return ft


class Flare:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.flare_last_error.restype = ctypes.c_char_p
        self.lib.flare_session_create.restype = ctypes.c_void_p
        self.lib.flare_session_create.argtypes = [ctypes.c_int]
        self.lib.flare_attention.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(FlareTensor)] * 4 + [
            ctypes.POINTER(FlareOptions), ctypes.c_void_p]
        self.lib.flare_kernel_load.restype = ctypes.c_void_p
        self.lib.flare_kernel_load.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        # Libraries before flare_kernel_load_options (an A/B against an older build) load without options.
        self.has_load_options = hasattr(self.lib, "flare_kernel_load_options")
        if self.has_load_options:
            self.lib.flare_kernel_load_options.restype = ctypes.c_void_p
            self.lib.flare_kernel_load_options.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                                           ctypes.c_char_p]
        self.lib.flare_kernel_launch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32), ctypes.c_int32,
                                                 ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_uint64),
                                                 ctypes.c_void_p]
        self.lib.flare_attention_backward.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(FlareTensor)] * 9 + [
            ctypes.POINTER(FlareOptions), ctypes.c_void_p]
        self.lib.flare_block_mask_build.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(FlareTensor)] * 4 + [
            ctypes.POINTER(FlareOptions), ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        self.lib.flare_block_mask_build_backward.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(FlareTensor)] * 5 + [
            ctypes.POINTER(FlareOptions), ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        self.lib.flare_block_mask_destroy.restype = None
        self.lib.flare_block_mask_destroy.argtypes = [ctypes.c_void_p]
        torch.cuda.init()
        self.session = self.lib.flare_session_create(torch.cuda.current_device())
        if not self.session:
            raise RuntimeError(self.lib.flare_last_error().decode())

    def _check(self, rc):
        if rc != 0:
            raise RuntimeError(self.lib.flare_last_error().decode())

    def attention(self, q, k, v, out, causal, config=None, kv_splits=None, kv_lens=None, page_table=None,
                  cu_seqlens=None):
        opt = FlareOptions()
        opt.causal = int(causal)
        if cu_seqlens is not None:  # (offsets of q, of k, longest q, longest k)
            opt.cu_seqlens_q, opt.cu_seqlens_k = flare_tensor(cu_seqlens[0]), flare_tensor(cu_seqlens[1])
            opt.max_seqlen_q, opt.max_seqlen_k = cu_seqlens[2], cu_seqlens[3]
        if kv_splits is not None:
            opt.kv_splits = kv_splits
        if kv_lens is not None:
            opt.kv_lens = flare_tensor(kv_lens)
        if page_table is not None:
            opt.page_table = flare_tensor(page_table)
        if config == "autotune":
            opt.autotune = 1
        elif config:
            opt.block_m, opt.block_n, opt.num_warps = config[:3]
            # Switches: 1 on, 0 off, -1 the configured choice (the C API's 1 / -1 / 0).
            switches = {1: 1, 0: -1, -1: 0}
            if len(config) > 3:
                opt.overlap = switches[config[3]]
            if len(config) > 4:
                opt.ping_pong = switches[config[4]]
            if len(config) > 5:
                opt.producer = switches[config[5]]
            if len(config) > 6:  # 2: persistent, the CTAs taking instances from a shared counter
                opt.persistent = 2 if config[6] == 2 else switches[config[6]]
        self.apply_mod(opt)
        tensors = [flare_tensor(t) for t in (q, k, v, out)]
        self._check(self.lib.flare_attention(self.session, *[ctypes.byref(t) for t in tensors], ctypes.byref(opt),
                                             ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)))
        return out

    # The modifier of the calls (a ScoreMod; speed_sweep sets it per sweep).
    mod = None

    def apply_mod(self, opt):
        opt.window_left = opt.window_right = -1
        if self.mod:
            opt.softcap = self.mod.softcap
            opt.window_left = self.mod.window

    def options(self, causal, lse=None):
        opt = FlareOptions()
        opt.causal = int(causal)
        self.apply_mod(opt)
        if lse is not None:
            opt.lse = flare_tensor(lse)
        return opt

    def forward(self, q, k, v, out, lse, causal):
        """flare_attention returning the LSE (f32 [B, Hq, Sq]) the backward needs."""
        opt = self.options(causal, lse)
        tensors = [flare_tensor(t) for t in (q, k, v, out)]
        self._check(self.lib.flare_attention(self.session, *[ctypes.byref(t) for t in tensors], ctypes.byref(opt),
                                             ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)))

    def backward(self, q, k, v, out, dout, lse, dq, dk, dv, causal, deterministic=False):
        opt = self.options(causal)
        opt.deterministic = int(deterministic)
        tensors = [flare_tensor(t) for t in (q, k, v, out, dout, lse, dq, dk, dv)]
        self._check(self.lib.flare_attention_backward(
            self.session, *[ctypes.byref(t) for t in tensors], ctypes.byref(opt),
            ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)))

    def kernel(self, text, name, options=""):
        """A kernel of a tile-dialect module; `options` as flare_kernel_load_options takes them."""
        if self.has_load_options:
            k = self.lib.flare_kernel_load_options(self.session, text.encode(), name.encode(), options.encode())
        elif options:
            raise RuntimeError(f"{self.lib._name} has no flare_kernel_load_options (compile options '{options}')")
        else:
            k = self.lib.flare_kernel_load(self.session, text.encode(), name.encode())
        if not k:
            raise RuntimeError(self.lib.flare_last_error().decode())
        return k

    def launch(self, kernel, grid, args):
        kinds = (ctypes.c_int32 * len(args))(*[kind for kind, _ in args])
        values = (ctypes.c_uint64 * len(args))(*[value for _, value in args])
        g = (ctypes.c_uint32 * 3)(*grid)
        self._check(self.lib.flare_kernel_launch(kernel, g, len(args), kinds, values,
                                                 ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)))


def time_rounds(kind, calls, args, d, causal, s, samples):
    """--rounds rounds of --iters calls of each of `calls` (name -> call) in turn; every call's time goes to
    `samples` under (kind, name, d, causal, s). Returns name -> the median ms. With --cuda-graphs each
    method's --iters calls are captured once into a CUDA graph and a round replays it (time_graph); a
    method whose calls do not capture is left out with a printed note."""
    if args.cuda_graphs:
        graphs = {}
        for name, call in calls.items():
            try:
                graphs[name] = capture_calls(call, args.iters)
            except Exception as e:  # noqa: BLE001
                print(f"{kind} {name}: not timed, its calls do not capture into a CUDA graph: "
                      f"{unavailable(e)}", flush=True)
        timers = {name: (lambda g=g: time_graph(g, args.iters)) for name, g in graphs.items()}
    else:
        timers = {name: (lambda call=call: time_calls(call, args.iters)) for name, call in calls.items()}
    times = {name: [] for name in timers}
    for r in range(args.rounds):
        for name, timer in timers.items():
            t = timer()
            times[name] += t
            samples.extend((kind, name, d, causal, s, r, i, ms) for i, ms in enumerate(t))
    return {name: median(t) for name, t in times.items() if t}


def capture_calls(fn, iters):
    """`iters` calls of `fn` captured into one CUDA graph on a side stream, after three warm calls on that
    stream (a method's per-stream state, such as Flare's workspace, is made there before capturing)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(iters):
            fn()
    torch.cuda.synchronize()
    return graph


def time_graph(graph, iters, replays=5):
    """Device ms per call of a graph of `iters` calls: `replays` replays timed as time_calls times calls. No
    host work between the kernels: what is left is the kernels and the gaps the GPU needs between launches."""
    return [ms / iters for ms in time_calls(graph.replay, replays)]


def time_calls(fn, iters):
    """Device times (ms) of `iters` calls. The calls are queued back to back, each between two events, and
    synchronized once at the end (as triton.testing.do_bench does): a call's host-side work overlaps the
    previous call's kernel, so a method's launch overhead does not count as kernel time."""
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def unavailable(error):
    """The note of a method that failed: the first line of its error."""
    return f"unavailable: {str(error).splitlines()[0][:80]}"


def median(times):
    times = sorted(times)
    return times[len(times) // 2]


def sdpa(backend):
    """SDPA at one backend; with gqa=True, query heads over fewer KV heads (enable_gqa)."""
    def run(q, k, v, causal, gqa=False):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    return run


def flex_method(mod=None):
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError:
        return None
    # One compiled kernel per shape: without room for them dynamo falls back to eager after 8.
    torch._dynamo.config.cache_size_limit = 256
    compiled = torch.compile(flex_attention, dynamic=False)
    masks = {}
    window = mod.window if mod else -1
    cap = mod.softcap if mod else 0.0

    def causal_mask(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def window_mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx <= window

    def causal_window_mask(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= window)

    def softcap(score, b, h, q_idx, kv_idx):
        return cap * torch.tanh(score / cap)

    def run(q, k, v, causal):
        mask = (causal_window_mask if causal else window_mask) if window >= 0 else causal_mask if causal else None
        block_mask = None
        if mask:
            key = (q.shape[2], k.shape[2], causal)
            if key not in masks:
                masks[key] = create_block_mask(mask, None, None, q.shape[2], k.shape[2])
            block_mask = masks[key]
        return compiled(q, k, v, block_mask=block_mask, score_mod=softcap if cap > 0 else None)
    return run


def versions():
    info = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__, "cudnn": str(torch.backends.cudnn.version()), "python": platform.python_version()}
    try:
        info["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                        capture_output=True, text=True).stdout.strip()
    except OSError:
        info["driver"] = "unknown"
    return info


def shapes(args, d):
    """The setup's shapes at head dim d, each on fresh random inputs: (causal, seqlen, batch, heads,
    q, k, v, out) with batch = tokens / seqlen and heads = hidden / d (bf16, [B, H, S, D])."""
    for causal in map(bool, args.causal):
        for s in args.seqlens:
            b, h = args.tokens // s, args.hidden // d
            if b < 1:
                continue
            torch.manual_seed(s + d)
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            yield causal, s, b, h, q, k, v, torch.empty_like(q)
            del q, k, v
            torch.cuda.empty_cache()


def sustain(calls, seconds):
    """Keeps the GPU busy with the shape's methods in turn for `seconds` before the timed rounds: the
    power controller lowers the clock for a fraction of a second when heavy work begins, and a timed
    window that falls into that dip reads low for whichever method it meets."""
    if seconds <= 0 or not calls:
        return
    torch.cuda.synchronize()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for call in calls.values():
            for _ in range(5):
                call()
        torch.cuda.synchronize()


# FLOPs of each kind of timed call, in units of the forward's 4 * B * H * S^2 * D (halved when causal):
# the backward has five matmuls of which one recomputes the scores (FlashAttention's 2.5x).
FLOP_FACTORS = {"forward": 1.0, "backward": 2.5, "fwdbwd": 3.5}


def max_diff(xs, ys):
    return max((x.float() - y.float()).abs().max().item() for x, y in zip(xs, ys))


def forward_calls(flare, methods, q, k, v, out, causal, ref, ref_name="sdpa"):
    """The forward calls of the methods (name -> SDPA/Flex function, or a Flare configuration), each
    warmed up; Flare's outputs are poisoned and compared with `ref` first. Returns (calls, notes)."""
    calls, notes = {}, {}
    for name, fn in methods.items():
        try:
            if name.startswith("flare"):
                out.fill_(float("nan"))
                flare.attention(q, k, v, out, causal, fn)
                torch.cuda.synchronize()
                if ref is not None:
                    notes[name] = f"max |out - {ref_name}| {(out.float() - ref.float()).abs().max().item():.4f}"
                call = lambda cfg=fn: flare.attention(q, k, v, out, causal, cfg)
            else:
                notes[name] = ""
                call = lambda fn=fn: fn(q, k, v, causal)
            for _ in range(3):
                call()
            calls[name] = call
        except Exception as e:  # a failing method must not stop the sweep
            notes[name] = unavailable(e)
    return calls, notes


def backward_calls(flare, methods, q, k, v, out, causal, with_forward, refs=None, ref_name="sdpa"):
    """The backward calls (with_forward: forward and backward) of the methods. Flare: flare_attention with
    its LSE, then flare_attention_backward; the others: their forward under autograd, then
    out.backward(dout). Every method's gradients are compared on the same dout with those of the first
    of `refs` (forwards under autograd, named `ref_name` in the notes) that runs, by default cuDNN's, else
    the math backend's; Flare's are poisoned first. Returns (calls, notes)."""
    dout = torch.randn_like(q)
    b, h, s, _ = q.shape
    lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    ref = None
    for fn in refs if refs is not None else [sdpa(SDPBackend.CUDNN_ATTENTION), sdpa(SDPBackend.MATH)]:
        try:
            fn(*leaves, causal).backward(dout)
            ref = [t.grad.clone() for t in leaves]
            break
        except Exception:  # no cuDNN for this shape: the math backend
            for t in leaves:
                t.grad = None
    calls, notes = {}, {}
    for name, fn in methods.items():
        try:
            if name == "flare":
                flare.forward(q, k, v, out, lse, causal)
                for t in (dq, dk, dv):
                    t.fill_(float("nan"))
                flare.backward(q, k, v, out, dout, lse, dq, dk, dv, causal)
                grads = (dq, dk, dv)

                def call():
                    if with_forward:
                        flare.forward(q, k, v, out, lse, causal)
                    flare.backward(q, k, v, out, dout, lse, dq, dk, dv, causal)
            else:
                for t in leaves:
                    t.grad = None
                o = fn(*leaves, causal)

                def call(fn=fn, o=o):
                    for t in leaves:
                        t.grad = None
                    (fn(*leaves, causal) if with_forward else o).backward(dout, retain_graph=not with_forward)
                call()
                grads = [t.grad for t in leaves]
            torch.cuda.synchronize()
            notes[name] = f"max |grad - {ref_name}| {max_diff(grads, ref):.4f}" if ref is not None else ""
            for _ in range(2):
                call()
            calls[name] = call
        except Exception as e:  # a failing method must not stop the sweep
            notes[name] = unavailable(e)
    return calls, notes


def speed_sweep(flare, args, rows, samples):
    methods = {"flare": None}
    # Tuning: each tile configuration (BLOCK_M x BLOCK_N x warps) as a method of its own.
    for c in args.configs:
        methods["flare-" + c] = tuple(int(x) for x in c.split("x"))
    # Flare's autotuning mode: the first (warm-up) call of a shape times the candidates.
    if args.autotune:
        methods["flare-autotune"] = "autotune"
    methods.update({"sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
               "sdpa-flash": sdpa(SDPBackend.FLASH_ATTENTION), "sdpa-efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION)})
    if args.no_peers:
        for name in [m for m in methods if not m.startswith("flare")]:
            del methods[name]
    for mod in args.score_mods:
        flare.mod = mod
        try:
            # Under a modifier the SDPA backends drop out (none takes one) and FlexAttention, which
            # takes it, is the reference.
            mod_methods = {m: fn for m, fn in methods.items() if m.startswith("flare")} if mod else methods
            flex = flex_method(mod) if args.flex_hdims and not args.no_peers else None
            speed_sweep_mod(flare, args, rows, samples, mod, mod_methods, flex)
        finally:
            flare.mod = None


def speed_sweep_mod(flare, args, rows, samples, mod, methods, flex):
    methods = dict(methods)
    # What outputs and gradients are checked against: FlexAttention under a modifier (nothing without
    # it: --no-peers, an A/B of Flare builds whose kernels the GPU tests check), else cuDNN, else the
    # math backend.
    refs = ([flex] if flex else []) if mod else [sdpa(SDPBackend.CUDNN_ATTENTION), sdpa(SDPBackend.MATH)]
    ref_name = "flex" if mod else "sdpa"
    for d in args.hdims:
        if flex and d in args.flex_hdims:
            methods["flex"] = flex
        else:
            methods.pop("flex", None)
        for causal, s, b, h, q, k, v, out in shapes(args, d):
            for kind in [k for k in args.kinds if k in FLOP_FACTORS]:
                if kind == "forward":
                    ref = None
                    for fn in refs:
                        try:  # no cuDNN: check against the math backend
                            ref = fn(q, k, v, causal)
                            break
                        except Exception:
                            pass
                    calls, notes = forward_calls(flare, methods, q, k, v, out, causal, ref, ref_name)
                    del ref
                    kind_methods = methods
                else:
                    # The backward of Flare's default configuration only (tile configurations and
                    # autotuning are forward options).
                    kind_methods = {m: fn for m, fn in methods.items() if m == "flare" or not m.startswith("flare")}
                    calls, notes = backward_calls(flare, kind_methods, q, k, v, out, causal, kind == "fwdbwd",
                                                  refs=refs, ref_name=ref_name)
                time_methods(kind, calls, notes, kind_methods, args, d, causal, s, b, h, rows, samples, mod)
                del calls
            del q, k, v, out


def time_methods(kind, calls, notes, methods, args, d, causal, s, b, h, rows, samples, mod=None):
    """Times the warmed-up calls of one shape and kind: --rounds rounds in which each method runs --iters
    calls in turn, so that the methods share the GPU's clock and thermal state instead of one of them
    meeting a hotter GPU; one row per method (NaN where it failed), of kind KIND+MOD under a modifier."""
    pairs = mod.pairs(s, causal) if mod else s * s / (2 if causal else 1)
    flops = FLOP_FACTORS[kind] * 4 * b * h * pairs * d
    kind = mod.kind(kind) if mod else kind
    times = {name: [] for name in calls}
    sustain(calls, args.warmup_s)
    for r in range(args.rounds):
        for name in list(calls):
            try:
                t = time_calls(calls[name], args.iters)
            except Exception as e:
                notes[name] = unavailable(e)
                del calls[name]
                continue
            times[name] += t
            for i, ms in enumerate(t):
                samples.append((kind, name, d, int(causal), s, r, i, ms))
    for name in methods:
        ms = median(times[name]) if name in calls else float("nan")
        tflops = flops / (ms * 1e-3) / 1e12
        note = notes.get(name, "")
        rows.append(dict(kind=kind, method=name, hdim=d, causal=int(causal), seqlen=s, batch=b, heads=h,
                         ms=f"{ms:.4f}", tflops=f"{tflops:.1f}", peak_extra_mib="", note=note))
        print(f"{kind:8s} {name:15s} d={d:3d} causal={int(causal)} S={s:6d} B={b:3d} H={h:3d}: {ms:8.3f} ms "
              f"{tflops:7.1f} TFLOP/s {note}", flush=True)


def copy_bandwidth(iters=20):
    """The device's copy bandwidth (bytes read + written per second) on a 4 GiB buffer: the ceiling of
    a kernel that reads K and V once."""
    src = torch.empty(2 ** 31, device="cuda", dtype=torch.int16)
    dst = torch.empty_like(src)
    ms = median(time_calls(lambda: dst.copy_(src), iters))
    del src, dst
    torch.cuda.empty_cache()
    return 2 * 2 ** 32 / (ms * 1e-3)


def cold_copies(args, kv_bytes):
    """How many copies of a decoding shape's inputs --decode-cold takes: enough that the K and V the calls
    read in turn hold twice the L2's bytes (1 without --decode-cold)."""
    if not args.decode_cold:
        return 1
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return max(1, -(-2 * l2 // kv_bytes))


def rotation(calls):
    """One callable that makes the next of `calls` at each call, in turn."""
    turn = itertools.cycle(calls)
    return lambda: next(turn)()


def decode_sweep(flare, args, rows, samples):
    """Decoding: one query per sequence (--decode-queries) against a KV cache of --decode-keys keys, GQA
    --decode-heads (query heads : KV heads), head dims --decode-hdims (128), batch --decode-batches. The
    measure is the bandwidth of the K and V read: 2 x B x Hkv x Skv x D x 2 bytes per call, against the
    device's copy bandwidth measured in the same run (method `device-copy`). Flare: flare_attention as a user calls it
    (the keys split by the launch shape) and with the split off (`flare-nosplit`, kv_splits = 1); SDPA's
    backends with enable_gqa, and FlexAttention (compiled, enable_gqa). Each method's output is
    compared with cuDNN's (else the math backend's). Back to back, a cache smaller than the L2 (batch 1 8k
    keys: 33.5 MB at head dim 128) is read partly from the L2 by every call but the first; --decode-cold
    times the calls over copies of the inputs instead, as a model's layers meet their caches."""
    copy = copy_bandwidth()
    print(f"decode device-copy: {copy / 1e12:.2f} TB/s", flush=True)
    hq, hkv = args.decode_heads
    sq = args.decode_queries
    methods = {"flare": None, "flare-nosplit": 1}
    # Tuning: Flare at the --configs tile configurations (the split decided by the launch shape).
    for c in args.configs:
        methods["flare-" + c] = tuple(int(x) for x in c.split("x"))
    # And at forced numbers of key parts.
    for n in args.decode_splits:
        methods[f"flare-splits={n}"] = n
    # Paged caches (--decode-pages): the same keys in pages of that many keys, scattered over a pool in
    # vLLM's [num_pages, page_size, Hkv, D] layout, every sequence at full length (kv_lens).
    for ps in args.decode_pages:
        methods[f"flare-paged{ps}"] = ("paged", ps)
        for c in args.configs:  # and at the --configs tiles
            methods[f"flare-paged{ps}-{c}"] = ("paged", ps, tuple(int(x) for x in c.split("x")))
    backends = {"sdpa-cudnn": SDPBackend.CUDNN_ATTENTION, "sdpa-flash": SDPBackend.FLASH_ATTENTION,
                "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION}
    flex = None
    if not args.no_peers:
        methods.update(backends)
        # FlexAttention (torch.compile, GQA without a mask): its decoding path for short queries
        # (not with an empty --flex-hdims).
        if args.flex_hdims:
            try:
                from torch.nn.attention.flex_attention import flex_attention
                # One compiled kernel per shape: without room for them dynamo falls back to eager after 8.
                torch._dynamo.config.cache_size_limit = 256
                compiled = torch.compile(flex_attention, dynamic=False)
                flex = lambda q, k, v: compiled(q, k, v, enable_gqa=True)
                methods["flex"] = "flex"
            except ImportError:
                pass

    def paged_call(q, k, v, out, ps, cfg=None):
        """A paged copy of k and v and the call that reads it (None when the length is no multiple of ps),
        at the tile configuration `cfg` (None: Flare's choice)."""
        b, hkv, s, d = k.shape
        if s % ps:
            return None
        pages = b * s // ps
        perm = torch.randperm(pages, device="cuda")
        table = perm.view(b, s // ps).to(torch.int32).contiguous()
        kc, vc = (torch.empty(pages, ps, hkv, d, device="cuda", dtype=k.dtype) for _ in range(2))
        for src, dst in ((k, kc), (v, vc)):
            # Page p of sequence i holds keys [p ps, (p + 1) ps) of it.
            dst[table.view(-1).long()] = src.view(b, hkv, s // ps, ps, d).permute(0, 2, 3, 1, 4).reshape(pages, ps, hkv, d)
        lens = torch.full((b,), s, device="cuda", dtype=torch.int32)
        # [num_pages, Hkv, page_size, D] logically, [num_pages, page_size, Hkv, D] in memory.
        kv, vv = kc.permute(0, 2, 1, 3), vc.permute(0, 2, 1, 3)
        return lambda: flare.attention(q, kv, vv, out, False, cfg, kv_lens=lens, page_table=table)

    for d in args.decode_hdims:
        for b in args.decode_batches:
            for s in args.decode_keys:
                torch.manual_seed(b * 131 + s)
                try:
                    q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.bfloat16)
                    k, v = (torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
                except torch.OutOfMemoryError:
                    print(f"decode D={d} B={b} S={s}: out of memory", flush=True)
                    continue
                out = torch.empty_like(q)
                kv_bytes = 2 * b * hkv * s * d * 2
                ref = None
                for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH):
                    try:
                        with sdpa_kernel(backend):
                            ref = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                        break
                    except Exception:  # noqa: BLE001
                        continue
                # --decode-cold: further copies of Q, K and V (their own paged caches too), so that the
                # calls a method makes in turn read more K and V than the L2 holds.
                sets = [(q, k, v)]
                for _ in range(cold_copies(args, kv_bytes) - 1):
                    sets.append((torch.randn_like(q), torch.randn_like(k), torch.randn_like(v)))
                calls, notes = {}, {}
                for name, how in methods.items():
                    try:
                        turns = []
                        for qi, ki, vi in sets:
                            if name.startswith("flare"):
                                if isinstance(how, tuple) and how[0] == "paged":
                                    call = paged_call(qi, ki, vi, out, *how[1:])
                                    if call is None:
                                        break
                                else:
                                    cfg, splits = (how, None) if isinstance(how, tuple) else (None, how)
                                    call = (lambda qi=qi, ki=ki, vi=vi, cfg=cfg, splits=splits:
                                            flare.attention(qi, ki, vi, out, False, cfg, kv_splits=splits))
                            elif how == "flex":
                                call = lambda qi=qi, ki=ki, vi=vi: flex(qi, ki, vi)
                            else:
                                def call(backend=how, qi=qi, ki=ki, vi=vi):
                                    with sdpa_kernel(backend):
                                        return F.scaled_dot_product_attention(qi, ki, vi, enable_gqa=True)
                            turns.append(call)
                        if not turns:
                            notes[name] = f"Skv not a multiple of {how[1]}"
                            continue
                        # The output of the first copy's call, checked against the reference.
                        if name.startswith("flare"):
                            out.fill_(float("nan"))
                            turns[0]()
                            torch.cuda.synchronize()
                            got = out
                        else:
                            got = turns[0]()
                        notes[name] = (f"max |out - sdpa| {(got.float() - ref.float()).abs().max().item():.4f}"
                                       if ref is not None else "")
                        if len(turns) > 1:
                            notes[name] += f", {len(turns)} copies in turn"
                        call = turns[0] if len(turns) == 1 else rotation(turns)
                        for _ in range(3 * len(turns)):
                            call()
                        calls[name] = call
                    except Exception as e:  # noqa: BLE001
                        notes[name] = unavailable(e)
                medians = time_rounds("decode", calls, args, d, 0, s, samples)
                for name in methods:
                    ms = medians.get(name, float("nan"))
                    tbps = kv_bytes / (ms * 1e-3) / 1e12
                    rows.append(dict(kind="decode", method=name, hdim=d, causal=0, seqlen=s, batch=b, heads=f"{hq}:{hkv}",
                                     ms=f"{ms:.4f}", tflops="", tbps=f"{tbps:.3f}", peak_extra_mib="", note=notes.get(name, "")))
                    print(f"decode {name:15s} D={d:3d} B={b:3d} Skv={s:7d} {hq}:{hkv}: {ms:8.4f} ms {tbps:6.2f} TB/s "
                          f"{notes.get(name, '')}", flush=True)
                del q, k, v, out, ref, calls, sets
                torch.cuda.empty_cache()
            rows.append(dict(kind="decode", method="device-copy", hdim=d, causal=0, seqlen="", batch=b,
                             heads=f"{hq}:{hkv}", ms="", tflops="", tbps=f"{copy / 1e12:.3f}", peak_extra_mib="", note=""))


def varlen_sweep(flare, args, rows, samples):
    """Prefill of packed prompts: causal sequences of lengths drawn uniformly from --varlen-lengths (a
    fixed seed), --tokens in all, hidden --hidden, packed in FlashAttention's [total, H, D] layout and
    called with cu_seqlens (`flare-varlen`); beside them the equal-length forward of the same tokens
    (`flare-equal`, B sequences of the mean length, [B, H, S, D]) and SDPA's cuDNN backend on that
    shape, and FlexAttention on the packed rows with a document-causal BlockMask (`flex-document`).
    TFLOP/s count the kept (causal, same-sequence) elements of each method's own problem."""
    lo, hi = args.varlen_lengths
    for d in args.hdims:
        h = args.hidden // d
        gen = torch.Generator().manual_seed(d)
        lens = []
        while sum(lens) < args.tokens:
            lens.append(int(torch.randint(lo, hi + 1, (1,), generator=gen)))
        total, b = sum(lens), len(lens)
        mean = round(total / b)
        cu = torch.tensor([0] + list(itertools.accumulate(lens)), device="cuda", dtype=torch.int32)
        torch.manual_seed(d)
        q, k, v = (torch.randn(total, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        out = torch.empty_like(q)
        # [1, H, total, D] views of the packed rows.
        qv, kv, vv, ov = (t.permute(1, 0, 2).unsqueeze(0) for t in (q, k, v, out))
        qe, ke, ve = (torch.randn(b, h, mean, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        oe = torch.empty_like(qe)
        kept = sum(n * (n + 1) // 2 for n in lens)
        flops = {"flare-varlen": 4 * d * h * kept, "flex-document": 4 * d * h * kept,
                 "flare-equal": 4 * d * h * b * mean * (mean + 1) // 2, "sdpa-cudnn-equal": 4 * d * h * b * mean * (mean + 1) // 2}
        calls, notes = {}, {}
        packing = (cu, cu, max(lens), max(lens))
        calls["flare-varlen"] = lambda: flare.attention(qv, kv, vv, ov, True, cu_seqlens=packing)
        # Tuning: the packed call and the equal-length one at the --configs tile configurations.
        for c in args.configs:
            cfg = tuple(int(x) for x in c.split("x"))
            calls["flare-varlen-" + c] = lambda cfg=cfg: flare.attention(qv, kv, vv, ov, True, cfg, cu_seqlens=packing)
            calls["flare-equal-" + c] = lambda cfg=cfg: flare.attention(qe, ke, ve, oe, True, cfg)
            flops["flare-varlen-" + c], flops["flare-equal-" + c] = flops["flare-varlen"], flops["flare-equal"]
        calls["flare-equal"] = lambda: flare.attention(qe, ke, ve, oe, True)
        if not args.no_peers:
            calls["sdpa-cudnn-equal"] = lambda: sdpa(SDPBackend.CUDNN_ATTENTION)(qe, ke, ve, True)
            try:
                from torch.nn.attention.flex_attention import create_block_mask, flex_attention
                doc = torch.repeat_interleave(torch.arange(b, device="cuda"), torch.tensor(lens, device="cuda"))

                def document_causal(bb, hh, qi, kj):
                    return (doc[qi] == doc[kj]) & (qi >= kj)
                mask = create_block_mask(document_causal, None, None, total, total)
                compiled = torch.compile(flex_attention, dynamic=False)
                calls["flex-document"] = lambda: compiled(qv, kv, vv, block_mask=mask)
            except Exception as e:  # noqa: BLE001
                notes["flex-document"] = unavailable(e)
        # Flare's packed output against SDPA on each sequence alone (a few of them).
        ok = {}
        for name in list(calls):
            try:
                ov.fill_(float("nan"))
                got = calls[name]()
                torch.cuda.synchronize()
                if name.startswith("flare-varlen"):
                    worst = 0.0
                    for i in range(min(b, 4)):
                        s0, s1 = int(cu[i]), int(cu[i + 1])
                        ref = F.scaled_dot_product_attention(qv[:, :, s0:s1], kv[:, :, s0:s1], vv[:, :, s0:s1],
                                                             is_causal=True)
                        worst = max(worst, (ov[:, :, s0:s1].float() - ref.float()).abs().max().item())
                    notes[name] = f"max |out - sdpa| {worst:.4f} (first sequences)"
                for _ in range(3):
                    calls[name]()
                ok[name] = calls[name]
            except Exception as e:  # noqa: BLE001
                notes[name] = unavailable(e)
        medians = time_rounds("varlen", ok, args, d, 1, total, samples)
        for name in flops:
            ms = medians.get(name, float("nan"))
            tflops = flops[name] / (ms * 1e-3) / 1e12
            rows.append(dict(kind="varlen", method=name, hdim=d, causal=1, seqlen=f"{lo}-{hi}" if "equal" not in name else mean,
                             batch=b, heads=h, ms=f"{ms:.4f}", tflops=f"{tflops:.1f}", tbps="", peak_extra_mib="",
                             note=notes.get(name, "")))
            print(f"varlen {name:17s} hd={d:3d} {b} sequences, {total} tokens (mean {mean}): {ms:8.4f} ms "
                  f"{tflops:6.1f} TFLOP/s {notes.get(name, '')}", flush=True)
        del q, k, v, out, qe, ke, ve, oe, calls, ok
        torch.cuda.empty_cache()


def relpos_module(d, causal):
    """Flare's module for a relative-position bias read per score element: s + table[kv - q + 65536]."""
    t = f"tensor<?x?x?x{d}xbf16>"
    mask = ("    mask_mod {\n    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %tb: tensor<?xf32>):\n"
            "      %keep = arith.cmpi sge, %qi, %kv : index\n      attn.yield %keep : i1\n    }\n") if causal else ""
    return (f"func.func @relpos(%q: {t}, %k: {t}, %v: {t}, %bias: tensor<?xf32>) -> {t} {{\n"
            f"  %o = attn.attention %q, %k, %v aux(%bias : tensor<?xf32>)\n"
            "    score_mod {\n    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %tb: tensor<?xf32>):\n"
            "      %off = arith.constant 65536 : index\n      %dd = arith.subi %kv, %qi : index\n"
            "      %i = arith.addi %dd, %off : index\n      %x = attn.aux_load %tb[%i] : tensor<?xf32>\n"
            "      %y = arith.addf %s, %x : f32\n      attn.yield %y : f32\n    }\n"
            f"{mask}    : {t}, {t}, {t} -> {t}\n  return %o : {t}\n}}\n")


def relpos_sweep(flare, args, rows, samples):
    """A score_mod reading an aux table per score element (relative-position bias, table[kv - q]) on the
    setup's shapes: Flare's compiled modifier, FlexAttention's score_mod (a block mask when causal) and
    SDPA with the bias materialised as an [S, S] float mask (efficient backend), same inputs."""
    table = torch.randn(131072, device="cuda", dtype=torch.float32)
    for d in args.hdims:
        for causal, s, b, h, q, k, v, out in shapes(args, d):
            opt = FlareOptions()
            opt.window_left = opt.window_right = -1
            module = relpos_module(d, causal).encode()
            opt.module = module
            aux = (FlareTensor * 1)(flare_tensor(table))
            opt.num_aux, opt.aux = 1, aux
            tensors = [flare_tensor(t) for t in (q, k, v, out)]
            stream = lambda: ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            calls, notes = {}, {}
            calls["flare"] = lambda: flare._check(flare.lib.flare_attention(
                flare.session, *[ctypes.byref(t) for t in tensors], ctypes.byref(opt), stream())) or out
            if not args.no_peers:
                try:
                    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

                    def bias(score, bb, hh, qi, kj):
                        return score + table[kj - qi + 65536]
                    mask = None
                    if causal:
                        mask = create_block_mask(lambda bb, hh, qi, kj: qi >= kj, None, None, s, s)
                    compiled = torch.compile(flex_attention, dynamic=False)
                    calls["flex"] = lambda: compiled(q, k, v, score_mod=bias, block_mask=mask)
                except Exception as e:  # noqa: BLE001
                    notes["flex"] = unavailable(e)
                try:
                    idx = torch.arange(s, device="cuda")
                    dense = table[idx[None, :] - idx[:, None] + 65536].to(torch.bfloat16)
                    if causal:
                        dense = dense.masked_fill(idx[None, :] > idx[:, None], float("-inf"))
                    calls["sdpa-efficient-bias"] = lambda: sdpa_bias(q, k, v, dense)
                except Exception as e:  # noqa: BLE001
                    notes["sdpa-efficient-bias"] = unavailable(e)
            ok, ref = {}, None
            for name in list(calls):
                try:
                    got = calls[name]()
                    torch.cuda.synchronize()
                    if name == "flex":
                        ref = got
                    for _ in range(3):
                        calls[name]()
                    ok[name] = calls[name]
                except Exception as e:  # noqa: BLE001
                    notes[name] = unavailable(e)
            if "flare" in ok:
                out.fill_(float("nan"))
                ok["flare"]()
                torch.cuda.synchronize()
                if ref is not None:
                    notes["flare"] = f"max |out - flex| {(out.float() - ref.float()).abs().max().item():.4f}"
            medians = time_rounds("relpos", ok, args, d, int(causal), s, samples)
            flops = 4 * b * h * s * s * d // (2 if causal else 1)
            for name in calls:
                ms = medians.get(name, float("nan"))
                tflops = flops / (ms * 1e-3) / 1e12
                rows.append(dict(kind="relpos", method=name, hdim=d, causal=int(causal), seqlen=s, batch=b, heads=h,
                                 ms=f"{ms:.4f}", tflops=f"{tflops:.1f}", tbps="", peak_extra_mib="",
                                 note=notes.get(name, "")))
                print(f"relpos   {name:19s} d={d:3d} causal={int(causal)} S={s:6d} B={b:3d} H={h:3d}: {ms:8.3f} ms "
                      f"{tflops:6.1f} TFLOP/s {notes.get(name, '')}", flush=True)
            del calls, ok, ref
            torch.cuda.empty_cache()


def sdpa_bias(q, k, v, bias):
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


def module_call(flare, module, aux, q, k, v, out, **fields):
    """flare_attention(q, k, v, out) with a custom module (bytes) and its aux tensors, the options built once
    (fields: more of them, block_lists, block_mask). Returns (call, build): build() runs
    flare_block_mask_build with the same options and returns the lists (flare_block_mask_destroy frees them)."""
    opt = FlareOptions()
    opt.window_left = opt.window_right = -1
    opt.module = module
    opt.num_aux, opt.aux = len(aux), (FlareTensor * len(aux))(*[flare_tensor(t) for t in aux])
    for name, value in fields.items():
        setattr(opt, name, value)
    tensors = [flare_tensor(t) for t in (q, k, v, out)]
    call_args = lambda: [flare.session] + [ctypes.byref(t) for t in tensors] + [
        ctypes.byref(opt), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)]

    def call():
        flare._check(flare.lib.flare_attention(*call_args()))
        return out

    def build():
        mask = ctypes.c_void_p()
        flare._check(flare.lib.flare_block_mask_build(*call_args(), ctypes.byref(mask)))
        return mask
    return call, build


def build_ms(build, free=None, reps=5):
    """Median wall time (ms) of build(), synchronized, over `reps` builds after one warm-up; free(mask) after
    each."""
    times = []
    for _ in range(reps + 1):
        torch.cuda.synchronize()
        start = time.perf_counter()
        mask = build()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
        if free:
            free(mask)
    return median(times[1:])


def masked_reference(q, k, v, mask_mod, chunk=1024):
    """Float32 attention of q, k, v [B, H, S, D] under mask_mod (FlexAttention's signature, here on broadcast
    index tensors), by chunks of query rows; rows without a kept key are zero."""
    cols = torch.arange(k.shape[2], device="cuda")
    kf, vf = k.float(), v.float()
    out = torch.empty(q.shape, device="cuda", dtype=torch.float32)
    for r0 in range(0, q.shape[2], chunk):
        rows = torch.arange(r0, min(r0 + chunk, q.shape[2]), device="cuda")
        scores = q[:, :, r0:r0 + chunk].float() @ kf.transpose(-1, -2) / math.sqrt(q.shape[3])
        scores.masked_fill_(~mask_mod(None, None, rows[:, None], cols[None, :]), float("-inf"))
        out[:, :, r0:r0 + chunk] = torch.softmax(scores, -1).nan_to_num_() @ vf
    return out


def masked_methods(flare, args, module, aux, mask_mod, q, k, v, out, **fields):
    """The methods of a mask read from aux tensors, on q, k, v [B, H, S, D]: Flare with the block lists built
    by each call (`flare`) and built once before (`flare-blockmask`), and FlexAttention (compiled) under a
    BlockMask of mask_mod (128 x 128 blocks). Returns (calls, builds: name -> (build, free) of each method's
    mask, notes, Flare's prebuilt lists: flare_block_mask_destroy them after the calls)."""
    calls, notes, mask = {}, {}, None
    calls["flare"], build = module_call(flare, module, aux, q, k, v, out, **fields)
    builds = {"flare-mask-build": (build, flare.lib.flare_block_mask_destroy)}
    try:
        mask = build()
        calls["flare-blockmask"] = module_call(flare, module, aux, q, k, v, out, block_mask=mask.value, **fields)[0]
    except Exception as e:  # noqa: BLE001
        notes["flare-blockmask"] = unavailable(e)
    if not args.no_peers:
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            # One compiled kernel per shape and mask: without room for them dynamo falls back to eager after 8.
            torch._dynamo.config.cache_size_limit = 256
            s = q.shape[2]
            build_flex = lambda: create_block_mask(mask_mod, None, None, s, s, BLOCK_SIZE=128)
            block_mask = build_flex()
            compiled = torch.compile(flex_attention, dynamic=False)
            calls["flex"] = lambda: compiled(q, k, v, block_mask=block_mask)
            builds["flex-mask-build"] = (build_flex, None)
        except Exception as e:  # noqa: BLE001
            notes["flex"] = unavailable(e)
    return calls, builds, notes, mask


def time_masked(kind, args, shape, tensors, calls, builds, notes, flops, dense, mask_mod, rows, samples,
                kept_rows=None, note="", ratio=False):
    """One shape of the masked sweeps (shape: the rows' hdim, causal, seqlen, batch, heads). Each method runs
    once, its output (Flare's out poisoned first) compared with FlexAttention's, else with a float32
    reference under mask_mod, on the query rows that keep a key (kept_rows, else all); the dense method
    (dense: its name and FLOPs) is not compared. Then --rounds rounds of --iters calls per method, and each
    mask build timed apart (build_ms, tflops empty). TFLOP/s: `flops` (the kept elements) for the masked
    methods. ratio: flare-blockmask's note gives the dense method's time over its own."""
    q, k, v, out = tensors
    ref, src = None, "flex"
    if "flex" in calls:
        try:
            ref = calls["flex"]()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            notes["flex"] = unavailable(e)
            del calls["flex"]
    if ref is None:
        ref, src = masked_reference(q, k, v, mask_mod), "f32 reference"
    ok = {}
    for name, call in calls.items():
        try:
            out.fill_(float("nan"))  # Flare's rows left unwritten show as NaN
            got = call()
            torch.cuda.synchronize()
            if name != dense[0] and not (name == "flex" and src == "flex"):
                diff = got.float() - ref.float()
                diff = diff if kept_rows is None else diff[:, :, kept_rows]
                notes[name] = (f"max |out - {src}| {diff.abs().max().item():.4f}" +
                               ("" if kept_rows is None else " (rows with a kept key)"))
                del diff
            for _ in range(3):
                call()
            ok[name] = call
        except Exception as e:  # noqa: BLE001
            notes[name] = unavailable(e)
    del ref
    ms = time_rounds(kind, ok, args, shape["hdim"], shape["causal"], shape["seqlen"], samples)
    if ratio and "flare-blockmask" in ms and dense[0] in ms:
        notes["flare-blockmask"] += f"; x{ms[dense[0]] / ms['flare-blockmask']:.2f} vs dense"

    def emit(name, t, tflops):
        text = "; ".join(x for x in (note, notes.get(name, "")) if x)
        rows.append(dict(kind=kind, method=name, **shape, ms=f"{t:.4f}", tflops=tflops, tbps="", peak_extra_mib="",
                         note=text))
        print(f"{kind:11s} {name:19s} d={shape['hdim']:3d} S={shape['seqlen']:6d} B={shape['batch']:3d} "
              f"H={shape['heads']:3d}: {t:8.3f} ms {tflops + ' TFLOP/s' if tflops else '(mask build)':>14s} {text}",
              flush=True)
    # Flare's methods first, then the peers, then the mask builds.
    for name in sorted(dict.fromkeys(list(calls) + list(notes)), key=lambda n: not n.startswith("flare")):
        if name not in builds:
            t = ms.get(name, float("nan"))
            emit(name, t, f"{(dense[1] if name == dense[0] else flops) / (t * 1e-3) / 1e12:.1f}")
    for name, (build, free) in builds.items():
        try:
            t = build_ms(build, free)
        except Exception as e:  # noqa: BLE001
            t, notes[name] = float("nan"), unavailable(e)
        emit(name, t, "")


def example_at_head_dims(args, name):
    """(d, heads, module text) of examples/attention/<name> at each of --hdims, heads = --hidden / d."""
    with open(os.path.join(args.examples, "attention", name)) as f:
        template = f.read()
    for d in args.hdims:
        yield d, args.hidden // d, template.replace("x128x", f"x{d}x").encode()


def document_sweep(flare, args, rows, samples):
    """Causal document masks, batch 1, heads --hidden / d, 8k, 16k and 32k tokens: documents of 500-2000
    tokens (drawn with a fixed seed, the last one cut at S), their ids an aux tensor (i32 [S]) read by
    examples/attention/document.mlir's mask_mod. Flare with block lists built by each call, prebuilt and
    off (the mask per element), FlexAttention's document-causal BlockMask and cuDNN on plain causal
    attention of the same tensors; FLOPs 4 D H x the kept elements (sum of n (n + 1) / 2 over documents)."""
    for d, h, module in example_at_head_dims(args, "document.mlir"):
        for s in (8192, 16384, 32768):
            lens = document_lengths(s)
            doc = torch.repeat_interleave(torch.arange(len(lens), dtype=torch.int32), torch.tensor(lens)).cuda()
            kept = sum(n * (n + 1) // 2 for n in lens)
            torch.manual_seed(s + d)
            q, k, v = (torch.randn(1, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            out = torch.empty_like(q)

            def document_causal(bb, hh, qi, kj):
                return (doc[qi] == doc[kj]) & (qi >= kj)
            # document.mlir returns the LSE as well.
            lse = torch.empty(1, h, s, device="cuda", dtype=torch.float32)
            calls, builds, notes, mask = masked_methods(flare, args, module, [doc], document_causal, q, k, v, out,
                                                        lse=flare_tensor(lse))
            calls["flare-elementwise"] = module_call(flare, module, [doc], q, k, v, out, block_lists=-1,
                                                     lse=flare_tensor(lse))[0]
            if not args.no_peers:
                calls["sdpa-cudnn-causal"] = lambda: sdpa(SDPBackend.CUDNN_ATTENTION)(q, k, v, True)
            time_masked("document", args, dict(hdim=d, causal=1, seqlen=s, batch=1, heads=h), (q, k, v, out),
                        calls, builds, notes, 4 * d * h * kept, ("sdpa-cudnn-causal", 4 * d * h * s * (s + 1) // 2),
                        document_causal, rows, samples, note=f"{len(lens)} documents")
            flare.lib.flare_block_mask_destroy(mask)
            del q, k, v, out, lse, doc, calls, builds, mask
            torch.cuda.empty_cache()


def document_lengths(s):
    """Document lengths of 500-2000 tokens summing to s (a fixed seed per s, the last one cut)."""
    gen = torch.Generator().manual_seed(s)
    lens = []
    while sum(lens) < s:
        lens.append(int(torch.randint(500, 2001, (1,), generator=gen)))
    lens[-1] -= sum(lens) - s
    return lens


def document_backward_sweep(flare, args, rows, samples):
    """The backward of causal document masks (document_sweep's documents, 8k and 16k tokens, batch 1, heads
    --hidden / d) after one forward: Flare with and without block lists, FlexAttention's backward under its
    BlockMask, cuDNN's causal backward; FLOPs 2.5 x 4 D H x the kept elements."""
    for d, h, module in example_at_head_dims(args, "document.mlir"):
        for s in (8192, 16384):
            lens = document_lengths(s)
            doc = torch.repeat_interleave(torch.arange(len(lens), dtype=torch.int32), torch.tensor(lens)).cuda()
            kept = sum(n * (n + 1) // 2 for n in lens)
            torch.manual_seed(s + d)
            q, k, v, dout = (torch.randn(1, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
            out, dq, dk, dv = (torch.empty_like(t) for t in (q, k, v, v))
            lse = torch.empty(1, h, s, device="cuda", dtype=torch.float32)

            def document_causal(bb, hh, qi, kj):
                return (doc[qi] == doc[kj]) & (qi >= kj)
            module_call(flare, module, [doc], q, k, v, out, lse=flare_tensor(lse))[0]()
            calls, notes, grads = {}, {}, {}

            stream = lambda: ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

            def options(lists, mask=None):
                opt = FlareOptions()
                opt.window_left = opt.window_right = -1
                opt.module = module
                opt.num_aux, opt.aux = 1, (FlareTensor * 1)(flare_tensor(doc))
                opt.block_lists = lists
                opt.block_mask = mask
                return opt

            def backward_call(lists, mask=None):
                opt = options(lists, mask)
                tensors = [flare_tensor(t) for t in (q, k, v, out, dout, lse, dq, dk, dv)]

                def call():
                    flare._check(flare.lib.flare_attention_backward(
                        flare.session, *[ctypes.byref(t) for t in tensors], ctypes.byref(opt), stream()))
                    return dq, dk, dv
                return call

            def build():
                opt, mask = options(0), ctypes.c_void_p()
                tensors = [flare_tensor(t) for t in (q, k, v, out, lse)]
                flare._check(flare.lib.flare_block_mask_build_backward(
                    flare.session, *[ctypes.byref(t) for t in tensors], ctypes.byref(opt), stream(), ctypes.byref(mask)))
                return mask
            mask = build()
            calls["flare"], calls["flare-elementwise"] = backward_call(0), backward_call(-1)
            calls["flare-blockmask"] = backward_call(0, mask.value)
            if not args.no_peers:
                leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
                try:
                    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
                    torch._dynamo.config.cache_size_limit = 256
                    block_mask = create_block_mask(document_causal, None, None, s, s, BLOCK_SIZE=128)
                    o = torch.compile(flex_attention, dynamic=False)(*leaves, block_mask=block_mask)

                    def flex(o=o):
                        for t in leaves:
                            t.grad = None
                        o.backward(dout, retain_graph=True)
                        return [t.grad for t in leaves]
                    calls["flex"] = flex
                except Exception as e:  # noqa: BLE001
                    notes["flex"] = unavailable(e)
                dense = [t.detach().clone().requires_grad_() for t in (q, k, v)]
                try:
                    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                        od = F.scaled_dot_product_attention(*dense, is_causal=True)

                    def cudnn(od=od):
                        for t in dense:
                            t.grad = None
                        od.backward(dout, retain_graph=True)
                    calls["sdpa-cudnn-causal"] = cudnn
                except Exception as e:  # noqa: BLE001
                    notes["sdpa-cudnn-causal"] = unavailable(e)
            ok = {}
            for name, call in calls.items():
                try:
                    for t in (dq, dk, dv):
                        t.fill_(float("nan"))
                    got = call()
                    torch.cuda.synchronize()
                    if got is not None:
                        grads[name] = [t.clone() for t in got]
                    for _ in range(2):
                        call()
                    ok[name] = call
                except Exception as e:  # noqa: BLE001
                    notes[name] = unavailable(e)
            ref = grads.get("flex")
            for name in ("flare", "flare-elementwise"):
                if name in grads and ref is not None:
                    notes[name] = f"max |grad - flex| {max_diff(grads[name], ref):.4f}"
            medians = time_rounds("document-backward", ok, args, d, 1, s, samples)
            for name in calls:
                t = medians.get(name, float("nan"))
                flops = 2.5 * 4 * d * h * (s * (s + 1) // 2 if name == "sdpa-cudnn-causal" else kept)
                note = "; ".join(x for x in (f"{len(lens)} documents", notes.get(name, "")) if x)
                rows.append(dict(kind="document-backward", method=name, hdim=d, causal=1, seqlen=s, batch=1, heads=h,
                                 ms=f"{t:.4f}", tflops=f"{flops / (t * 1e-3) / 1e12:.1f}", tbps="", peak_extra_mib="",
                                 note=note))
                print(f"document-backward {name:19s} d={d:3d} S={s:6d}: {t:8.3f} ms {flops / (t * 1e-3) / 1e12:8.1f} "
                      f"TFLOP/s {note}", flush=True)
            builds = {"flare-mask-build": (build, flare.lib.flare_block_mask_destroy)}
            if "flex" in ok:
                builds["flex-mask-build"] = (lambda: create_block_mask(document_causal, None, None, s, s, BLOCK_SIZE=128),
                                             None)
            for name, (fn, free) in builds.items():
                t = build_ms(fn, free)
                rows.append(dict(kind="document-backward", method=name, hdim=d, causal=1, seqlen=s, batch=1, heads=h,
                                 ms=f"{t:.4f}", tflops="", tbps="", peak_extra_mib="", note=f"{len(lens)} documents"))
                print(f"document-backward {name:19s} d={d:3d} S={s:6d}: {t:8.3f} ms (mask build)", flush=True)
            flare.lib.flare_block_mask_destroy(mask)
            del q, k, v, dout, out, dq, dk, dv, lse, doc, calls, grads, ok
            torch.cuda.empty_cache()


def blocksparse_sweep(flare, args, rows, samples):
    """Block-sparse attention (examples/attention/block_sparse.mlir: a row-major i32 table of the kept
    128 x 128 blocks, an aux tensor) at 4k, 8k and 16k tokens, batch 16384 / S, heads --hidden / d, and
    densities 0.05, 0.25 and 0.5: random tables (a fixed seed) with about 5% of the block rows empty. Flare
    with block lists per call and prebuilt, Flare's dense forward of the same shape (`flare-dense`, no
    mask) and FlexAttention's BlockMask of the table; FLOPs 4 D H B x the kept blocks' elements (clipped at
    S). Rows without a kept key (zero in Flare's output) are left out of the checks."""
    for d, h, module in example_at_head_dims(args, "block_sparse.mlir"):
        for s in (4096, 8192, 16384):
            b, nb = max(1, 16384 // s), -(-s // 128)
            sizes = (s - 128 * torch.arange(nb)).clamp(max=128)
            torch.manual_seed(s + d)
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            out = torch.empty_like(q)
            for density in (0.05, 0.25, 0.5):
                gen = torch.Generator().manual_seed(s + round(density * 100))
                kept = torch.rand(nb, nb, generator=gen) < density
                kept[torch.rand(nb, generator=gen) < 0.05] = False  # about 5% of the block rows empty
                table = kept.to(torch.int32).cuda()
                elements = int((sizes[:, None] * sizes[None, :])[kept].sum())
                kept_rows = kept.any(1).repeat_interleave(128)[:s].cuda()

                def block_sparse(bb, hh, qi, kj):
                    return table[qi // 128, kj // 128] != 0
                calls, builds, notes, mask = masked_methods(flare, args, module, [table.view(-1)], block_sparse,
                                                            q, k, v, out)
                calls["flare-dense"] = lambda: flare.attention(q, k, v, out, False)
                # Tuning: the lists per call with a producer warpgroup issuing the K/V copies.
                calls["flare-producer"] = module_call(flare, module, [table.view(-1)], q, k, v, out, producer=1)[0]
                time_masked("blocksparse", args, dict(hdim=d, causal=0, seqlen=s, batch=b, heads=h), (q, k, v, out),
                            calls, builds, notes, 4 * d * h * b * elements, ("flare-dense", 4 * d * h * b * s * s),
                            block_sparse, rows, samples, kept_rows, f"density {density}", ratio=True)
                flare.lib.flare_block_mask_destroy(mask)
                del calls, builds, mask, table, kept_rows
                torch.cuda.empty_cache()
            del q, k, v, out
            torch.cuda.empty_cache()


def run_naive(flare, kernels, q, k, v, out):
    """The three kernels of the naive tile example; S (f32) and P (bf16) live in global memory."""
    bh, s, d = q.shape[1], q.shape[2], q.shape[3]
    scores = torch.empty(bh, s, s, device="cuda", dtype=torch.float32)
    probs = torch.empty(bh, s, s, device="cuda", dtype=torch.bfloat16)
    ptr = lambda t: (0, t.data_ptr())
    i32 = lambda x: (1, x)
    flare.launch(kernels["naive_scores"], ((s + 63) // 64, (s + 63) // 64, bh),
                 [ptr(q), ptr(k), ptr(scores), i32(s), i32(s), (3, struct_f32(1.0 / math.sqrt(d)))])
    flare.launch(kernels["naive_softmax"], (s, bh, 1), [ptr(scores), ptr(probs), i32(s), i32(s)])
    flare.launch(kernels["naive_pv"], ((s + 63) // 64, bh, 1), [ptr(probs), ptr(v), ptr(out), i32(s), i32(s)])
    torch.cuda.synchronize()


def memory_sweep(flare, args, rows):
    with open(os.path.join(args.examples, "tile", "naive_attention.mlir")) as f:
        naive = f.read()
    kernels = {name: flare.kernel(naive, name) for name in ("naive_scores", "naive_softmax", "naive_pv")}
    bh, d = 16, 64
    for s in args.memory_seqlens:
        q, k, v = (torch.randn(1, bh, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        outs = {}
        for method in ("naive", "flare"):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            note = ""
            try:
                out = torch.empty_like(q)
                if method == "flare":
                    flare.attention(q, k, v, out, False)
                    torch.cuda.synchronize()
                else:
                    run_naive(flare, kernels, q, k, v, out)
                peak = (torch.cuda.max_memory_allocated() - base) / 2 ** 20
                outs[method] = out
            except torch.OutOfMemoryError:
                peak, note = float("nan"), "out of memory"
            rows.append(dict(kind="memory", method=method, hdim=d, causal=0, seqlen=s, batch=1, heads=bh, ms="",
                             tflops="", peak_extra_mib=f"{peak:.1f}", note=note))
            print(f"memory {method:6s} S={s:6d}: peak extra {peak:10.1f} MiB {note}", flush=True)
        if len(outs) == 2:
            diff = (outs["naive"].float() - outs["flare"].float()).abs().max().item()
            print(f"memory S={s}: max |naive - flare| = {diff:.4f}", flush=True)
        del q, k, v, outs
        torch.cuda.empty_cache()


def memory_backward_sweep(flare, args, rows):
    """Extra device memory of one backward call, batch 1, 16 heads, head dim 64, as the sequence grows:
    what the call allocates beyond its inputs (q, k, v, out, dout, LSE) and its gradients. Flare's
    workspace (D and the f32 dQ sums) is the runtime's, per stream, allocated through the driver: it is
    read from the device's free memory around the first call on a fresh stream (after a call on
    another stream loaded the kernels). SDPA's backends allocate through torch: the peak of torch's
    allocator during out.backward() less the gradients. The math backend materialises the S x S
    probabilities and shows what linear memory means."""
    bh, d = 16, 64
    backends = {"sdpa-flash": SDPBackend.FLASH_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
                "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION, "sdpa-math": SDPBackend.MATH}
    for s in args.memory_seqlens:
        q, k, v, dout = (torch.randn(1, bh, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        grad_mib = 3 * q.numel() * q.element_size() / 2 ** 20
        for method in ["flare"] + list(backends):
            note, peak = "", float("nan")
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                if method == "flare":
                    out, dq, dk, dv = (torch.empty_like(q) for _ in range(4))
                    lse = torch.empty(1, bh, s, device="cuda", dtype=torch.float32)
                    flare.forward(q, k, v, out, lse, False)
                    flare.backward(q, k, v, out, dout, lse, dq, dk, dv, False)
                    torch.cuda.synchronize()
                    stream = torch.cuda.Stream()
                    free = torch.cuda.mem_get_info()[0]
                    with torch.cuda.stream(stream):
                        flare.backward(q, k, v, out, dout, lse, dq, dk, dv, False)
                    stream.synchronize()
                    peak = (free - torch.cuda.mem_get_info()[0]) / 2 ** 20
                    del out, dq, dk, dv, lse, stream
                else:
                    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
                    with sdpa_kernel(backends[method]):
                        o = F.scaled_dot_product_attention(*leaves)
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated()
                    o.backward(dout)
                    torch.cuda.synchronize()
                    peak = (torch.cuda.max_memory_allocated() - base) / 2 ** 20 - grad_mib
                    del leaves, o
            except torch.OutOfMemoryError:
                note = "out of memory"
            except Exception as e:  # noqa: BLE001
                note = unavailable(e)
            rows.append(dict(kind="memory-backward", method=method, hdim=d, causal=0, seqlen=s, batch=1, heads=bh,
                             ms="", tflops="", peak_extra_mib=f"{peak:.1f}", note=note))
            print(f"memory-backward {method:15s} S={s:6d}: extra {peak:10.1f} MiB {note}", flush=True)
        del q, k, v, dout
        torch.cuda.empty_cache()


def run_arguments(description):
    """The arguments every benchmark run over head dims takes: the library, the CSV, the commit."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True, help="path to libflare.so")
    p.add_argument("--out", required=True, help="CSV file to write")
    p.add_argument("--commit", default="unknown")
    p.add_argument("--hdims", type=int, nargs="+", default=[64, 128, 256])
    return p


def struct_f32(x):
    return int.from_bytes(ctypes.c_float(x), "little")


def main():
    p = run_arguments(__doc__)
    p.add_argument("--examples", required=True, help="Flare's examples directory")
    p.add_argument("--seqlens", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--causal", type=int, nargs="+", default=[0, 1])
    p.add_argument("--memory-seqlens", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384, 32768, 65536])
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--iters", type=int, default=20, help="calls per method and round")
    p.add_argument("--rounds", type=int, default=3, help="rounds in which every method of a shape is timed in turn")
    p.add_argument("--warmup-s", type=float, default=0.0,
                   help="seconds in which a shape's methods run in turn before its timed rounds")
    p.add_argument("--cuda-graphs", action="store_true",
                   help="in the decode, varlen, relpos and masked sweeps, capture each method's --iters calls into "
                        "one CUDA graph and time its replays (ms per call = replay / iters): the host's time per "
                        "call, which bounds short decoding calls, leaves the measure")
    p.add_argument("--samples-out", help="also write every timed call (method, shape, round, index, ms) to this CSV")
    p.add_argument("--configs", nargs="*", default=[], help="also time Flare at these BMxBNxWARPS[xOVERLAP[xPINGPONG[xPRODUCER[xPERSISTENT]]]] "
                   "tile configurations (0x0x0: the configured tile; OVERLAP, PINGPONG, PRODUCER and PERSISTENT "
                   "1/0/-1 force the softmax / P V overlap, the warpgroup ping-pong, the producer warpgroup and "
                   "the persistent schedule on/off or leave the configured choice; PERSISTENT 2: persistent, its CTAs "
                   "taking instances from a shared counter)")
    p.add_argument("--no-peers", action="store_true", help="time Flare only (tuning runs)")
    p.add_argument("--autotune", action="store_true", help="also time Flare in its autotuning mode (flare-autotune)")
    p.add_argument("--no-memory", action="store_true", help="skip the memory sweeps")
    p.add_argument("--kinds", nargs="+", default=["forward", "backward", "fwdbwd", "decode"],
                   choices=["forward", "backward", "fwdbwd", "decode", "varlen", "relpos", "document",
                            "document-backward", "blocksparse"],
                   help="calls timed per shape: the forward, the backward (after one forward), both (rows of "
                        "these kinds; FLOPs 1, 2.5 and 3.5 times the forward's); and the decoding sweep (its own "
                        "shapes, bandwidth of the K and V read); the masked sweeps document and blocksparse "
                        "(their own shapes) only when named")
    p.add_argument("--score-mods", type=ScoreMod, nargs="+", default=[ScoreMod("none")], metavar="MOD",
                   help="modifiers of the forward / backward / fwdbwd rows: none, softcap=C, window=L (rows of "
                        "kind KIND+MOD: Flare and FlexAttention only)")
    p.add_argument("--decode-batches", type=int, nargs="+", default=[1, 8, 16, 64])
    p.add_argument("--decode-keys", type=int, nargs="+",
                   default=[1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072])
    p.add_argument("--decode-hdims", type=int, nargs="+", default=[128], help="head dims of the decoding sweep")
    p.add_argument("--decode-heads", type=int, nargs=2, default=[32, 8], metavar=("HQ", "HKV"))
    p.add_argument("--decode-queries", type=int, default=1, help="queries per sequence in the decoding sweep")
    p.add_argument("--decode-splits", type=int, nargs="*", default=[],
                   help="also time Flare's decoding with the keys in these numbers of parts (kv_splits)")
    p.add_argument("--decode-cold", action="store_true",
                   help="in the decoding sweep, each method's calls take turns over copies of Q, K and V that "
                        "together hold twice the L2's bytes, so that no call finds the K and V of the call before "
                        "it in the L2 (a layer's cache between two decoding steps of a model); the note says how many")
    p.add_argument("--decode-pages", type=int, nargs="*", default=[],
                   help="also time Flare's decoding from a paged cache of these page sizes (flare-pagedN)")
    p.add_argument("--varlen-lengths", type=int, nargs=2, default=[100, 4000], metavar=("MIN", "MAX"),
                   help="the varlen sweep's sequence lengths, drawn uniformly")
    p.add_argument("--flex-hdims", type=int, nargs="*", default=[64, 128, 256],
                   help="head dims at which FlexAttention (torch.compile) is timed too")
    args = p.parse_args()

    flare = Flare(args.lib)
    info = versions()
    print("# " + ", ".join(f"{k} {v}" for k, v in info.items()) + f", commit {args.commit}", flush=True)
    rows, samples = [], []
    if any(kind in ("forward", "backward", "fwdbwd") for kind in args.kinds):
        speed_sweep(flare, args, rows, samples)
    if "varlen" in args.kinds:
        varlen_sweep(flare, args, rows, samples)
    if "relpos" in args.kinds:
        relpos_sweep(flare, args, rows, samples)
    if "document" in args.kinds:
        document_sweep(flare, args, rows, samples)
    if "document-backward" in args.kinds:
        document_backward_sweep(flare, args, rows, samples)
    if "blocksparse" in args.kinds:
        blocksparse_sweep(flare, args, rows, samples)
    if "decode" in args.kinds:
        decode_sweep(flare, args, rows, samples)
    if args.samples_out:
        with open(args.samples_out, "w") as f:
            f.write("kind,method,hdim,causal,seqlen,round,index,ms\n")
            for row in samples:
                f.write(",".join(map(str, row[:-1])) + f",{row[-1]:.5f}\n")
    if not args.no_memory:
        if "forward" in args.kinds:
            memory_sweep(flare, args, rows)
        if "backward" in args.kinds or "fwdbwd" in args.kinds:
            memory_backward_sweep(flare, args, rows)
    fields = ["date", "commit", "gpu", "driver", "torch", "cudnn", "kind", "method", "hdim", "causal", "seqlen",
              "batch", "heads", "ms", "tflops", "tbps", "peak_extra_mib", "note"]
    with open(args.out, "w") as f:
        f.write(",".join(fields) + "\n")
        for r in rows:
            r.update(date=info["date"], commit=args.commit, gpu=info["gpu"], driver=info["driver"],
                     torch=info["torch"], cudnn=info["cudnn"])
            f.write(",".join(str(r.get(k, "")).replace(",", ";") for k in fields) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
