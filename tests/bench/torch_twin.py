#!/usr/bin/python3
"""torch_twin.py — gyro's intent-classifier transformer written in PyTorch, for speed comparison.

The same model as models/transformer.h, on the CPU, in both geometries:

  x0     = E[tok] (+) exp0(PE)                           Euclidean: E[tok] + PE
  layer  : qkv = log0(W_qkv (x) x) = W_qkv log0 x, softmax(q k^T / sqrt(D)) v per head
           a   = (+)_i  M_i (x) exp0(o_i)                 Euclidean: W_O [o_1 .. o_H]
           x   = residual / LayerNorm per the config      (hyperbolic default: none)
           f   = M_2 (x) exp0(phi(log0(M_1 (x) x (+) b_1))) (+) b_2
  pool   = exp0(max_t log0 x_t); logits = hyperbolic MLR (Ganea et al. 2018, eq. 25)

(+) is Moebius addition, (x) the Moebius matrix-vector product exp0(M log0 x); curvature -c.
Training step = forward + cross-entropy + backward + RMSProp on Euclidean tensors and
Riemannian SGD (x <- proj(exp_x(-lr (1-c|x|^2)^2/4 grad))) on ball tensors, as gyro does.

  torch_twin.py GEOMETRY DIM LAYERS HEADS FFN CLASSES VOCAB BATCH SEQ STEPS LAT_RUNS [DROPOUT]

prints one line of key=value pairs like tests/bench/classify_speed.c.

Fairness (say what is compared): the 16 heads' output projections M_i o_i are one batched
product (einsum over the heads), not a Python loop; their gyro-sum stays a left-to-right loop,
as Moebius addition is not associative. Environment:
  TORCH_THREADS  intra-op threads of PyTorch (default 1, gyro's predict and serving setting);
                 printed as threads=
  TWIN_BLOCK     seed (default: no residual, no LayerNorm, identity FFN, the seed's block) or
                 tangent-ln (tangent residual + hyperbolic LayerNorm log0 -> LN -> exp0 + ReLU,
                 what `gyro classify train --arch transformer` trains)
  TWIN_LENGTHS   a file of sequence lengths, one per line (e.g. the NLPCC utterances gyro's
                 tests/bench/classify_latency.sh predicts): the latency runs cycle through them
                 instead of using SEQ, so both sides see the same lengths
Latencies are the thread's CPU time per forward (time.thread_time; latency_*_ms) and wall time
beside it (latency_wall_median_ms).
"""
import math
import os
import sys
import time

import torch

EPS = 4e-3  # ball projection margin in float32 (DESIGN.md)


def artanh(x):
    x = x.clamp(-1 + 1e-7, 1 - 1e-7)
    return 0.5 * (torch.log1p(x) - torch.log1p(-x))


def norm(x):
    return x.norm(dim=-1, keepdim=True).clamp_min(1e-15)


def exp0(v, c):
    sc = math.sqrt(c)
    n = norm(v)
    return torch.tanh((sc * n).clamp(max=15)) * v / (sc * n)


def log0(y, c):
    sc = math.sqrt(c)
    n = norm(y)
    return artanh(sc * n) * y / (sc * n)


def mobius_add(x, y, c):
    xy = (x * y).sum(-1, keepdim=True)
    x2 = (x * x).sum(-1, keepdim=True)
    y2 = (y * y).sum(-1, keepdim=True)
    num = (1 + 2 * c * xy + c * y2) * x + (1 - c * x2) * y
    return num / (1 + 2 * c * xy + c * c * x2 * y2).clamp_min(1e-15)


def project(x, c):
    maxn = (1 - EPS) / math.sqrt(c)
    n = norm(x)
    return torch.where(n > maxn, x / n * maxn, x)


class Twin(torch.nn.Module):
    def __init__(self, hyp, C, L, H, F, K, V, T, dropout, c=1.0, block="seed"):
        super().__init__()
        self.block = block
        self.hyp, self.C, self.L, self.H, self.F, self.K = hyp, C, L, H, F, K
        self.D = (C + H - 1) // H
        A = self.H * self.D
        self.c, self.p = c, dropout
        g = torch.Generator().manual_seed(1)

        def xavier(*shape):
            fan_out, fan_in = shape[-2], shape[-1]
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            return torch.nn.Parameter((torch.rand(*shape, generator=g) * 2 - 1) * bound)

        e = torch.randn(V, C, generator=g) * 0.1
        self.wte = torch.nn.Parameter(exp0(e, c) if hyp else e)
        self.qkvw = xavier(L, 3 * A, C)
        self.attprojw = xavier(L, C, A)
        self.fcw = xavier(L, F, C)
        self.fcb = torch.nn.Parameter(torch.zeros(L, F))
        self.fcprojw = xavier(L, C, F)
        self.fcprojb = torch.nn.Parameter(torch.zeros(L, C))
        self.mlr_a = xavier(K, C)
        self.mlr_p = torch.nn.Parameter(torch.zeros(K, C))
        if not hyp or block == "tangent-ln":  # LayerNorm (Euclidean twin, or hyperbolic log0->LN->exp0)
            self.ln1 = torch.nn.ModuleList([torch.nn.LayerNorm(C) for _ in range(L)])
            self.ln2 = torch.nn.ModuleList([torch.nn.LayerNorm(C) for _ in range(L)])
        pos = torch.arange(T).unsqueeze(1)
        i = torch.arange(C).unsqueeze(0)
        angle = pos / torch.pow(10000.0, (2 * (i // 2)) / C)
        pe = torch.where(i % 2 == 0, torch.sin(angle), torch.cos(angle))
        self.register_buffer("pos", exp0(pe, c) if hyp else pe)

    def ball_params(self):
        return [self.wte, self.fcb, self.fcprojb, self.mlr_p] if self.hyp else []

    def hyp_res_ln(self, u, y, ln):
        """exp0(LN(log0(exp0(u + log0 y)))): tangent residual, then hyperbolic LayerNorm."""
        c = self.c
        r = project(exp0(u + log0(y, c), c), c)
        return project(exp0(ln(log0(r, c)), c), c)

    def forward(self, tok, lengths):
        B, T = tok.shape
        C, H, D, c = self.C, self.H, self.D, self.c
        A = H * D
        hyp = self.hyp
        x = self.wte[tok]
        x = mobius_add(x, self.pos[:T].expand(B, T, C), c) if hyp else x + self.pos[:T]
        mask = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)  # (B, T) padding
        drop = torch.nn.functional.dropout
        for l in range(self.L):
            u = log0(x, c) if hyp else x
            # q|k|v = log0(W (x) x) = W log0 x (gyro's qkv_tangent 1, its default)
            qkv = u @ self.qkvw[l].t()
            qkv = qkv.view(B, T, 3, H, D).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = (q @ k.transpose(-1, -2)) / math.sqrt(D)
            att = att.masked_fill(mask[:, None, None, :], float("-inf")).softmax(-1)
            o = (att @ v).transpose(1, 2)  # (B, T, H, D)
            o = drop(o, self.p, self.training)
            if hyp:
                wo = self.attprojw[l].view(C, H, D)
                # M_i (x) exp0(o_i) = exp0(M_i o_i) for every head in one batched product
                heads = project(exp0(torch.einsum("bthd,chd->bthc", o, wo), c), c)
                a = heads[:, :, 0]
                for i in range(1, H):
                    a = project(mobius_add(a, heads[:, :, i], c), c)
                if self.block == "tangent-ln":
                    x1 = self.hyp_res_ln(u, a, self.ln1[l])
                else:
                    x1 = a
                u2 = log0(x1, c)
                h1 = project(mobius_add(project(exp0(u2 @ self.fcw[l].t(), c), c),
                                        self.fcb[l].expand(B, T, -1), c), c)
                g0 = log0(h1, c)
                if self.block == "tangent-ln":
                    g0 = torch.relu(g0)
                g0 = drop(g0, self.p, self.training)
                f = project(mobius_add(project(exp0(g0 @ self.fcprojw[l].t(), c), c),
                                       self.fcprojb[l].expand(B, T, -1), c), c)
                x = self.hyp_res_ln(u2, f, self.ln2[l]) if self.block == "tangent-ln" else f
            else:
                a = o.reshape(B, T, A) @ self.attprojw[l].t()
                x1 = self.ln1[l](x + a)
                h1 = torch.relu(x1 @ self.fcw[l].t() + self.fcb[l])
                h1 = drop(h1, self.p, self.training)
                x = self.ln2[l](x1 + h1 @ self.fcprojw[l].t() + self.fcprojb[l])
        t = log0(x, c) if hyp else x
        pooled = t.masked_fill(mask[:, :, None], float("-inf")).max(1).values
        pooled = drop(pooled, self.p, self.training)
        if not hyp:
            return ((pooled[:, None, :] - self.mlr_p[None]) * self.mlr_a[None]).sum(-1)
        xb = exp0(pooled, c)
        sc = math.sqrt(c)
        mp = mobius_add(-self.mlr_p[None].expand(B, -1, -1), xb[:, None, :].expand(-1, self.K, -1), c)
        an = norm(self.mlr_a).squeeze(-1)
        lam = 2 / (1 - c * (self.mlr_p * self.mlr_p).sum(-1)).clamp_min(1e-15)
        inner = (mp * self.mlr_a[None]).sum(-1)
        den = ((1 - c * (mp * mp).sum(-1)) * an).clamp_min(1e-15)
        return lam * an / sc * torch.asinh(2 * sc * inner / den)


def main():
    a = sys.argv[1:]
    if len(a) < 11:
        sys.exit(__doc__)
    hyp = a[0] == "hyperbolic"
    C, L, H, F, K, V, B, T, steps, runs = (int(x) for x in a[1:11])
    dropout = float(a[11]) if len(a) > 11 else 0.0
    threads = int(os.environ.get("TORCH_THREADS", "1"))
    torch.set_num_threads(threads)
    block = os.environ.get("TWIN_BLOCK", "seed")
    if block not in ("seed", "tangent-ln"):
        sys.exit("TWIN_BLOCK must be seed or tangent-ln")
    lens = [T]
    if os.environ.get("TWIN_LENGTHS"):
        with open(os.environ["TWIN_LENGTHS"]) as f:
            lens = [max(1, min(int(x), 4096)) for x in f.read().split()]
    torch.manual_seed(7)
    m = Twin(hyp, C, L, H, F, K, V, max(T, max(lens)), dropout, block=block)
    ball = {id(p) for p in m.ball_params()}
    euclid = [p for p in m.parameters() if id(p) not in ball]
    opt = torch.optim.RMSprop(euclid, lr=1e-3, alpha=0.9, eps=1e-7)
    lengths = torch.full((B,), T, dtype=torch.long)
    loss = torch.tensor(0.0)

    def step():
        nonlocal loss
        tok = torch.randint(0, V, (B, T))
        lab = torch.randint(0, K, (B,))
        m.train()
        loss = torch.nn.functional.cross_entropy(m(tok, lengths), lab)
        opt.zero_grad(set_to_none=False)
        for p in m.ball_params():
            p.grad = None
        loss.backward()
        opt.step()
        with torch.no_grad():  # Riemannian SGD on ball rows (no step clipping in this twin)
            for p in m.ball_params():
                rg = p.grad * ((1 - m.c * (p * p).sum(-1, keepdim=True)) ** 2 / 4)
                v = -0.05 * rg
                # exp_x(v) = x (+) tanh(sqrt(c) lam_x |v| / 2) v / (sqrt(c)|v|)
                lam = 2 / (1 - m.c * (p * p).sum(-1, keepdim=True)).clamp_min(1e-15)
                sc = math.sqrt(m.c)
                n = norm(v)
                p.copy_(project(mobius_add(p, torch.tanh((sc * lam * n / 2).clamp(max=15)) * v / (sc * n), m.c), m.c))

    step()  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    train_s, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    m.eval()
    lat, wall, tot_len = [], [], 0
    with torch.no_grad():
        for r in range(runs + 10):
            n = lens[r % len(lens)]
            tok = torch.randint(0, V, (1, n))
            one = torch.full((1,), n, dtype=torch.long)
            s, w = time.thread_time(), time.perf_counter()
            m(tok, one)
            e, ew = time.thread_time() - s, time.perf_counter() - w
            if r >= 10:
                lat.append(e)
                wall.append(ew)
                tot_len += n
    mean = sum(lat) / len(lat)
    lat.sort()
    wall.sort()
    n_params = sum(p.numel() for p in m.parameters())
    print("impl=torch geometry=%s block=%s params=%d steps_per_s=%.3f steps_per_wall_s=%.3f ms_per_step=%.2f "
          "latency_median_ms=%.4f latency_p99_ms=%.4f latency_mean_ms=%.4f latency_wall_median_ms=%.4f "
          "mean_len=%.2f calls_per_cpu_s=%.1f loss=%.4f threads=%d" % (
              a[0], block, n_params, steps / train_cpu, steps / train_s, 1e3 * train_cpu / max(steps, 1), 1e3 * lat[runs // 2],
              1e3 * lat[int(0.99 * (runs - 1))], 1e3 * mean, 1e3 * wall[runs // 2], tot_len / runs,
              1.0 / mean, loss.item(), torch.get_num_threads()))


if __name__ == "__main__":
    main()
