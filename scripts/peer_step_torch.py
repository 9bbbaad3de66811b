"""The PyTorch half of scripts/peer-step.py: the weights, the KV cache, one decode step (eager ops and SDPA), its
capture in a CUDA graph and the replays' timing. Imported by peer-step.py once PyTorch and a CUDA device are there."""
import math

import torch

DEVICE = "cuda"
RMS_EPS = 1e-5
ATTENTION_GQA = "sdpa enable_gqa"
ATTENTION_FOLDED = "sdpa group folded into query length"
SDPA_BACKENDS = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}  # at::SDPBackend values

def random_matrix(rows, cols):
    """bf16 [rows, cols], N(0, 1/cols): random, never zeros; scaled in place so no second copy is made."""
    matrix = torch.randn(rows, cols, device=DEVICE, dtype=torch.bfloat16)
    return matrix.mul_(1.0 / math.sqrt(cols))


def norm_weight(size):
    return torch.randn(size, device=DEVICE, dtype=torch.bfloat16).mul_(0.1).add_(1.0)


def allocate_weights(spec):
    """Every weight of the model, one tensor per matrix; a tied LM head is the embedding tensor itself."""
    qkv_rows = (spec.heads + 2 * spec.kv_heads) * spec.head_dim
    layers = []
    for _ in range(spec.layers):
        layers.append({
            "attn_norm": norm_weight(spec.hidden),
            "wqkv": random_matrix(qkv_rows, spec.hidden),
            "wo": random_matrix(spec.hidden, spec.heads * spec.head_dim),
            "mlp_norm": norm_weight(spec.hidden),
            "wgu": random_matrix(2 * spec.intermediate, spec.hidden),
            "wdown": random_matrix(spec.hidden, spec.intermediate),
        })
    embedding = random_matrix(spec.vocab, spec.hidden)
    lm_head = embedding if spec.tied else random_matrix(spec.vocab, spec.hidden)
    return {"layers": layers, "final_norm": norm_weight(spec.hidden), "embedding": embedding, "lm_head": lm_head}


def allocate_kv_cache(spec, batch, seq_len):
    """Per layer K and V [B, nkv, S+1, d] bf16, filled in place with N(0, 1) (no temporary copy)."""
    shape = (batch, spec.kv_heads, seq_len + 1, spec.head_dim)
    keys, values = [], []
    for _ in range(spec.layers):
        keys.append(torch.empty(shape, device=DEVICE, dtype=torch.bfloat16).normal_())
        values.append(torch.empty(shape, device=DEVICE, dtype=torch.bfloat16).normal_())
    return {"k": keys, "v": values}


def rope_cos_sin(spec, position):
    """cos and sin [d] of the rotate-half RoPE at one position, computed in float64, held as bf16."""
    exponents = torch.arange(0, spec.head_dim, 2, dtype=torch.float64) / spec.head_dim
    angles = position * spec.rope_theta ** (-exponents)
    angles = torch.cat((angles, angles))
    return (angles.cos().to(DEVICE, torch.bfloat16), angles.sin().to(DEVICE, torch.bfloat16))


def make_buffers(spec, weights, batch, seq_len):
    """The graph's static inputs and outputs; x_in is the embedding of a fixed token per sequence."""
    token_ids = (torch.arange(batch, device=DEVICE, dtype=torch.int64) * 7919 + 1) % spec.vocab
    cos, sin = rope_cos_sin(spec, seq_len)
    return {
        "position": seq_len,
        "x_in": weights["embedding"][token_ids].contiguous(),
        "x_work": torch.empty(batch, spec.hidden, device=DEVICE, dtype=torch.bfloat16),
        "cos": cos, "sin": sin,
        "hidden_out": torch.empty(batch, spec.hidden, device=DEVICE, dtype=torch.bfloat16),
        "next_out": torch.empty(batch, device=DEVICE, dtype=torch.int64),
    }


def rms_norm(x, weight):
    """Llama's RMSNorm: normalised in fp32, cast back to bf16, then scaled by the weight."""
    x32 = x.float()
    x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + RMS_EPS)
    return weight * x32.to(x.dtype)


def apply_rope(x, cos, sin):
    """Rotate-half RoPE on [..., d] with cos, sin [d]."""
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def attend_gqa(q, k_cache, v_cache):
    """q [B, nh, d] against the cache [B, nkv, S+1, d] with SDPA's own grouped-query support; [B, nh*d]."""
    batch, heads, head_dim = q.shape
    out = torch.nn.functional.scaled_dot_product_attention(q.unsqueeze(2), k_cache, v_cache, enable_gqa=True)
    return out.reshape(batch, heads * head_dim)


def attend_folded(q, k_cache, v_cache):
    """The same attention with each KV head's query group as the query length: q [B, nkv, g, d]; [B, nh*d].
    Query head h uses KV head h // g (as Llama's repeat_kv), so the view keeps the heads' order; no mask."""
    batch, heads, head_dim = q.shape
    kv_heads = k_cache.shape[1]
    grouped = q.reshape(batch, kv_heads, heads // kv_heads, head_dim)
    out = torch.nn.functional.scaled_dot_product_attention(grouped, k_cache, v_cache)
    return out.reshape(batch, heads * head_dim)


def layer_step(spec, x, layer, k_cache, v_cache, buffers, attend):
    """One transformer layer for the new token; writes its K and V at index S of the cache."""
    linear = torch.nn.functional.linear
    batch, heads, kv_heads = x.shape[0], spec.heads, spec.kv_heads
    position = buffers["position"]
    h = rms_norm(x, layer["attn_norm"])
    qkv = linear(h, layer["wqkv"]).view(batch, heads + 2 * kv_heads, spec.head_dim)
    q = apply_rope(qkv[:, :heads], buffers["cos"], buffers["sin"])
    k = apply_rope(qkv[:, heads:heads + kv_heads], buffers["cos"], buffers["sin"])
    k_cache[:, :, position] = k
    v_cache[:, :, position] = qkv[:, heads + kv_heads:]
    x = x + linear(attend(q, k_cache, v_cache), layer["wo"])
    h = rms_norm(x, layer["mlp_norm"])
    gate_up = linear(h, layer["wgu"])
    activated = torch.nn.functional.silu(gate_up[:, :spec.intermediate]) * gate_up[:, spec.intermediate:]
    return x + linear(activated, layer["wdown"])


def decode_step(spec, weights, cache, buffers, attend):
    """The whole step, from the static x_in to the static next_out (token ids) and hidden_out (final norm)."""
    x = buffers["x_work"]
    x.copy_(buffers["x_in"])
    for layer, k_cache, v_cache in zip(weights["layers"], cache["k"], cache["v"]):
        x = layer_step(spec, x, layer, k_cache, v_cache, buffers, attend)
    h = rms_norm(x, weights["final_norm"])
    logits = torch.nn.functional.linear(h, weights["lm_head"])
    buffers["hidden_out"].copy_(h)
    buffers["next_out"].copy_(torch.argmax(logits, dim=-1))


def sdpa_backend(q, k_cache, v_cache, enable_gqa):
    """The backend SDPA would pick for these inputs (torch's private chooser), or None when it cannot tell."""
    try:
        kwargs = {"enable_gqa": True} if enable_gqa else {}
        choice = int(torch._fused_sdp_choice(q, k_cache, v_cache, **kwargs))
    except Exception:
        return None
    return SDPA_BACKENDS.get(choice, f"backend {choice}")


def choose_attention(spec, cache, batch):
    """(attend function, label, backend): SDPA with enable_gqa when it runs and is not the math backend (which
    would repeat K/V heads and so read more bytes); otherwise the group folded into the query length."""
    q = torch.randn(batch, spec.heads, spec.head_dim, device=DEVICE, dtype=torch.bfloat16)
    k_cache, v_cache = cache["k"][0], cache["v"][0]
    backend = sdpa_backend(q.unsqueeze(2), k_cache, v_cache, True)
    if backend != "math":
        try:
            attend_gqa(q, k_cache, v_cache)
            torch.cuda.synchronize()
            return attend_gqa, ATTENTION_GQA, backend
        except Exception:  # an older torch without enable_gqa, or no backend takes it
            pass
    grouped = q.reshape(batch, spec.kv_heads, spec.heads // spec.kv_heads, spec.head_dim)
    backend = sdpa_backend(grouped, k_cache, v_cache, False)
    return attend_folded, ATTENTION_FOLDED, backend


def capture_step(step, warmup):
    """Eager warm-up on a side stream (as torch documents), then the step captured in one CUDA graph, replayed
    once untimed."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    graph.replay()
    torch.cuda.synchronize()
    return graph


# Untimed replays before the timed ones, as treering-realrun step does: at least this many and this long. (On an
# H100, a llama3.2-1b step at batch 32 replayed at 3.58 ms for its first ~18 runs, then at 3.12 ms from then on.)
STEADY_REPLAYS = 20
STEADY_S = 0.2


def time_replays(graph, iters):
    """Seconds of each of iters replays, each between its own pair of CUDA events, after the steady-state
    warm-up (STEADY_REPLAYS replays and STEADY_S seconds at least)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    replays, warm_s = 0, 0.0
    while replays < STEADY_REPLAYS or warm_s < STEADY_S:
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        warm_s += start.elapsed_time(end) * 1e-3
        replays += 1
    samples_s = []
    for _ in range(iters):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        samples_s.append(start.elapsed_time(end) * 1e-3)
    return samples_s


def check_output(spec, buffers):
    """The first token ids, how many ids fall outside [0, V), how many final hidden values are NaN or inf."""
    torch.cuda.synchronize()
    ids = buffers["next_out"].tolist()
    invalid = sum(1 for token in ids if not 0 <= token < spec.vocab)
    non_finite = int((~torch.isfinite(buffers["hidden_out"])).sum().item())
    return {"next_token_ids": ids[:4], "invalid_token_ids": invalid, "non_finite": non_finite}
