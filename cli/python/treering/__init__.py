"""treering: tree vs ring attention decoding on GPU clusters, from Python.

Load a cluster (a preset or a YAML file, with what-if edits), then predict (the analytical model), simulate
(the flow-level replay, links shared), sweep or tune. Results are lists of plain dicts whose keys are the columns of
``treering predict --format csv``, so ``pandas.DataFrame(rows)`` takes them as they are::

    import pandas, treering
    c = treering.load_cluster("dgx-h100", nodes=2)
    df = pandas.DataFrame(treering.predict(c, seq_len="80k:1M:x2", algos=["tree", "ring"]))

Names may be given as the enums' members as well: ``algos=[treering.Algorithm.tree_fused]``,
``scope=treering.Scope.step``, ``engines=treering.Engine.sim``; str(member) is its name ("tree-fused").

Bad input (a file, a value, an argument) raises treering.InputError, a ValueError whose message is the
command's: ``preset:dgx-h100:43:18: error: invalid bandwidth ...``.
A bug raises RuntimeError("internal error: ... (please report it: ...)"), as the command exits 1 with it.
"""

import numbers
import os

from . import _treering
from ._treering import InputError, Algorithm, Engine, Scope, Placement, Op

__all__ = ["InputError", "Algorithm", "Engine", "Scope", "Placement", "Op", "COLUMNS", "UNITS", "Cluster", "load_cluster", "presets", "workloads", "algorithms", "predict", "simulate",
           "sweep", "crossover", "tune", "sensitivity", "collective", "moe_exchange", "plan", "validate", "calibrate", "plot"]

# The columns every predict/simulate/sweep record has, in the CSV's order: the command's own list (one list feeds
# the CSV, the JSON and these records). Records add the optional ones they carry: prefill_s; generation_s and its
# band; model_latency_s and transfers_simulated (simulated and swept rows); layer_s, step_s, tokens_per_s,
# weights_bytes, step_memory_bytes, max_seq_len (with a scope). calibration: none | inside | extrapolated;
# extrapolation: why, where the case leaves what the calibration measured.
COLUMNS = tuple(_treering.columns())
# Every column's unit, optional columns included: {"latency_s": "s", "volume_total_bytes": "bytes", ...}.
UNITS = dict(_treering.units())


def presets():
    """The cluster presets' names (``treering topo list``): dgx-h100, mi300x, ..."""
    return _treering.presets()


def workloads():
    """The workload presets' names (``treering workload list``): paper-mha16, llama3.1-8b, ..."""
    return _treering.workloads()


def algorithms():
    """Every decode algorithm: the paper's five (ring, tree, tree-fused, tree-lse, allgather-merge, the default
    of predict and simulate) and the engines' combines (pass-q, a2a, ag-rs)."""
    return _treering.algorithms()


class Cluster:
    """A loaded cluster: its graph and the decode model on all its GPUs. Make one with load_cluster().

    Properties: name, description, source (the preset or file it came from), nodes, gpus, domains (scale-up
    domains: NVLink/xGMI islands, usually one per node).
    """

    def __init__(self, impl):
        self._impl = impl

    name = property(lambda self: self._impl.name)
    description = property(lambda self: self._impl.description)
    source = property(lambda self: self._impl.source)
    nodes = property(lambda self: self._impl.nodes)
    gpus = property(lambda self: self._impl.gpus)
    domains = property(lambda self: self._impl.domains)

    def what_if(self, set=None, scale=None):
        """The same cluster with more edits of its file: ``set={"nics.bandwidth": "800Gb/s"}`` replaces
        values, ``scale={"hbm_bandwidth": 1.1}`` multiplies them (every group's own value, in its unit). Paths
        as ``treering ... --set``; the edits apply after this cluster's own, sets before scales."""
        return Cluster(self._impl.with_edits(_edits(set, scale)))

    def setting_values(self, path):
        """The values a setting path names in this cluster's (edited) file, as written: ["400Gb/s", ...]."""
        return self._impl.setting_values(path)

    def __repr__(self):
        return f"Cluster({self.source!r}: {self.name}, nodes={self.nodes}, gpus={self.gpus}, domains={self.domains})"


def load_cluster(cluster, nodes=None, gpus_per_node=None, set=None, scale=None):
    """A cluster from a preset name (presets()) or a YAML file (a path with '/' or ending in .yaml).

    nodes, gpus_per_node: as ``--nodes`` / ``--gpus-per-node``. set: what-if values, as ``--set``: a dict
    ``{"nics.bandwidth": "800Gb/s"}`` (numbers are written as str() writes them) or a list of "PATH=VALUE".
    scale: ``{PATH: factor}``, each value PATH names multiplied in its own unit. Raises InputError
    ("FILE:LINE:COL: error: ...") for a bad file, path or value.
    """
    return Cluster(_treering.load_cluster(str(cluster), nodes, gpus_per_node, _edits(set, scale)))


def predict(cluster, seq_len, algos=None, workload="paper-mha16", batch=None, split="equal", check_memory=False,
            impl="efficient", tp=None, cp=None, placement="tp-inner", tp_in_domain=False, scope="attention", tokens=None,
            prefill=False, replicas=1, dcp=None, dp_attention=False, ep=None, ep_kernel="low-latency", micro_batches=1):
    """The analytical model: one record per (length, algorithm), lengths outer, as ``treering predict``.

    cluster: a Cluster, or a preset name / YAML file loaded as it is. seq_len: an int, a string in the
    command's syntax ("80k", "1M", "80k,1M", "80k:5.12M:x2") or a list of those. algos: a name, a list, or
    None for the paper's five (``algorithms()`` lists all eight). workload: a preset, a YAML file or a Hugging
    Face config.json; batch replaces its batch. split: how the KV cache is shared out, "equal" or "by-speed" (in
    proportion to each GPU's speed: for mixed clusters), as ``--split``. check_memory: a case that does not fit in
    a GPU's memory is computed all the same and marked, as the command marks it ("fits": 0 and "does_not_fit":
    what it needs); True raises InputError for it instead. impl: the
    implementation predicted, a profile preset ("efficient", "meta-cp-decode", "paper-jax-microbench",
    "paper-torch-llama", "treering-realrun-cpu") or a YAML file, as ``--impl``; each record's latency_s_low /
    latency_s_high are its band (math.inf: unbounded).

    The deployed layout, as the command's options: tp (heads over a tensor-parallel group) and cp (each
    sequence's KV cache over a context-parallel group; one alone takes the rest of the GPUs, neither: cp over
    all), replicas (copies of the tp x cp layout side by side, each serving its own requests: an int, or "all"
    that the GPUs hold; their groups share the network), placement ("tp-inner" or "cp-inner"), tp_in_domain
    (refuse a TP group across scale-up domains), dcp (decode context parallelism inside the TP group, as vLLM's
    --dcp: divides tp), dp_attention (each GPU of the TP group attends its own sequences), ep (MoE models: the
    routed experts over this many GPUs, every GPU of the layout, the attention's layout repeated to fill them;
    each MoE layer dispatches and combines its tokens with ep_kernel, "low-latency", "normal" or "nccl";
    micro_batches 2 overlaps one half batch's exchanges with the other's compute), scope
    ("attention", "layer" or "step": the layer or the whole step around the attention, with layer_s, step_s,
    tokens_per_s, step_memory_bytes and max_seq_len). tokens: also the time to generate that many tokens
    (generation_s and its band); prefill: add the prompt's estimate (prefill_s).
    """
    return _treering.predict(_cluster(cluster), _lengths(seq_len), _algos(algos), str(workload), batch, str(split),
                             check_memory, str(impl), tp, cp, str(replicas), str(placement), bool(tp_in_domain), str(scope),
                             tokens, bool(prefill), dcp, bool(dp_attention), ep, str(ep_kernel), int(micro_batches))


def simulate(cluster, seq_len, algos=None, workload="paper-mha16", batch=None, split="equal", check_memory=True,
             impl="efficient", tp=None, cp=None, placement="tp-inner", tp_in_domain=False, scope="attention", tokens=None,
             prefill=False, replicas=1, dcp=None, dp_attention=False, ep=None, ep_kernel="low-latency",
             micro_batches=1):
    """The simulation of the same plans (every group of the layout at once, links shared max-min, as SimGrid
    shares them), arguments as predict(). Records as predict()'s with engine "sim", plus model_latency_s (the
    model's figure for the same case) and transfers_simulated."""
    return _treering.simulate(_cluster(cluster), _lengths(seq_len), _algos(algos), str(workload), batch, str(split),
                              check_memory, str(impl), tp, cp, str(replicas), str(placement), bool(tp_in_domain),
                              str(scope), tokens, bool(prefill), dcp, bool(dp_attention), ep, str(ep_kernel),
                              int(micro_batches))


def sweep(cluster, seq_len, nodes=None, workloads=None, batches=None, algos=None, engines=None, set=None, split="equal",
          jobs=1, impl="efficient", tp=None, cp=None, placement="tp-inner", tp_in_domain=False, scope="attention", replicas=1):
    """Every combination of nodes x workloads x batches x seq_len x algos x engines, as ``treering sweep``:
    rows in that order (the last varying fastest), each with model_latency_s.

    cluster: a preset name or a YAML file (not a Cluster: each node count is built afresh). nodes: an int or
    a list (None: the file's count). workloads: a name or list (None: paper-mha16). batches: an int or list
    (None: each workload's own). engines: "model", "sim" or both (None: model). set: as load_cluster's.
    split, impl: as predict's. jobs: worker processes (forked from this interpreter). Cases that do not fit in
    memory are computed all the same (a layer or step that does not fit raises InputError, as in predict).

    tp, cp, replicas, placement, tp_in_domain, scope: the layout, as predict's, placed on each node count's GPUs
    (one of tp, cp alone takes the rest of them: tp=8 sweeps CP across nodes); each record is predict()'s (or
    simulate()'s) for that layout and case, with the same tp, cp, placement and scope columns.
    """
    if isinstance(cluster, Cluster):
        raise TypeError("sweep takes a preset name or a YAML file (with nodes= and set=), not a Cluster")
    settings = [(path, value) for path, value, _ in _edits(set, None)]
    return _treering.sweep(str(cluster), _ints(nodes, "nodes"), _lengths(seq_len), _names(workloads, ["paper-mha16"]),
                           _ints(batches, "batches"), _algos(algos), _names(engines, ["model"]), settings, str(split),
                           int(jobs), str(impl), tp, cp, str(replicas), str(placement), bool(tp_in_domain), str(scope))


def crossover(cluster, seq_len="80k:5.12M:x2", nodes=(1, 2, 4, 8, 16), algos=None, workload="paper-mha16",
              batches=None, engine="model", set=None, impl="efficient", vs=None, jobs=1):
    """Where one algorithm beats another over context length x GPU count, as ``treering crossover --format json``:
    the same records, in the same order (GPU counts outer, lengths inner).

    Two algorithms (vs=None): one record per (GPU count, length) with gpus, seq_len, first, second, both
    latencies first_latency_s / second_latency_s with their bands (..._low / ..._high, None: unbounded), speedup
    (second's latency / first's: > 1 where the first wins), winner and within_band (the bands meet: the model
    cannot say which wins). algos: the two compared (None: tree and ring). batches: one batch (None: the
    workload's). engine: "model" or "sim". jobs: worker processes (forked from this interpreter).

    vs="tp": the planner's best context-parallel layout and combine (cp > 1) against the best plain tensor-parallel
    one, in time per output token, one record per (GPU count, length, batch): gpus, batch, seq_len, cp_best and
    tp_best (tp, cp, combine, step_s with its band, max_seq_len; None where nothing fits), speedup, winner ("cp",
    "tp" or "none") and within_band. algos: the combines tried (None: all). batches: an int or a list. The model
    only.

    cluster: a preset name or a YAML file (not a Cluster: each node count is built afresh). seq_len: as
    predict's. nodes: an int or a list. set: as load_cluster's. impl: as predict's. Defaults are the command's.
    """
    if isinstance(cluster, Cluster):
        raise TypeError("crossover takes a preset name or a YAML file (with nodes= and set=), not a Cluster")
    settings = [(path, value) for path, value, _ in _edits(set, None)]
    return _treering.crossover(str(cluster), _ints(nodes, "nodes"), _lengths(seq_len),
                               _names(algos, [] if vs == "tp" else ["tree", "ring"]), str(workload),
                               _ints(batches, "batches"), str(engine), settings, str(impl),
                               "" if vs is None else str(vs), int(jobs))


def plot(rows, x, y, output, series=None, log_x=False, log_y=False, title=None):
    """Draw rows as a line chart, as ``treering plot`` draws them (the main job's chart code, cairo), to output
    (a .png or .svg path); returns output.

    rows: a CSV or JSON file a command wrote (``treering sweep ... -o sweep.csv``; a JSON file's nested columns
    also under their CSV names), or a list of records as predict(), simulate() and sweep() return. x, y: numeric
    columns. series: a column or list of columns whose values make one line each ("algo", ["algo", "engine"]).
    log_x, log_y: logarithmic axes. title: None for "Y against X, by SERIES". A missing or non-numeric column, an
    empty file or a file that is neither .csv nor .json raises InputError, naming the columns there are.
    """
    args = (str(x), str(y), _names(series, []), bool(log_x), bool(log_y), "" if title is None else str(title),
            os.fspath(output))
    if isinstance(rows, (list, tuple)):
        _treering.plot_records(list(rows), *args)
    else:
        _treering.plot_file(os.fspath(rows), *args)
    return output


def tune(cluster, seq_len, workload="paper-mha16", batch=None, impl="efficient", confirm=5):
    """The distinct combine strategies ``treering tune`` searches (algorithm, collective algorithm, tree-lse fan-ins,
    leading GPU), timed by the model, fastest first, equivalents folded in as the command folds them: the
    "strategies" of ``treering tune --format json``. Records rank (1 = best), strategy, equivalents (how many were
    folded into it), algo, latency_s, its band latency_s_low / latency_s_high (inf when unbounded) and
    within_best_band (the model cannot tell it from the best); the best `confirm` also simulated_latency_s (the
    simulator's replay, as the command's --confirm)."""
    return _treering.tune(_cluster(cluster), _one_length(seq_len), str(workload), batch, str(impl), int(confirm))


def collective(cluster, op="allreduce", bytes="8:1G:x4", gpus=None, algorithm=None, protocol=None, algorithms="nccl",
               engines="model"):
    """The collective model over message sizes, as ``treering collective --format json``: one dict per size with
    time_s, its band time_s_low / time_s_high (None: unbounded), the algorithm and protocol NCCL would pick, algbw_Bps,
    busbw_Bps, the latency and transfer parts and every candidate's time.

    op: allreduce, allgather, reducescatter, broadcast, sendrecv or alltoall. bytes: an int, a string in the
    command's syntax ("8:16G:x8", "1M,4M") or a list of ints. gpus: the ranks (None: all GPUs; send/recv: GPU 0
    and the first GPU of another scale-up domain). algorithm, protocol: force one (None: the fastest).
    algorithms: "nccl" (what NCCL implements) or "all" (recursive doubling too). engines: "model", "sim" (the
    model's pick replayed flow by flow on the routes: simulated_time_s, simulated_flows, busiest_link_utilisation)
    or both, as a list or "model,sim". A size outside what a calibrated cluster measured warns (warnings.warn), as
    the command does.
    """
    if isinstance(engines, str):
        engines = engines.split(",")
    if isinstance(bytes, (list, tuple)):
        bytes = ",".join(str(int(b)) for b in bytes)
    return _treering.collective(_cluster(cluster), str(op), str(bytes), _ints(gpus, "gpus"), str(algorithm or ""),
                                str(protocol or ""), str(algorithms), [str(e) for e in engines])


def plan(cluster, seq_len, workload="llama3.1-8b", batch=None, gpus_max=None, algos=None, impl="efficient", confirm=3,
         tpot_target_ms=None, ep_kernel="low-latency"):
    """Every feasible TP x CP layout and combine ranked by time per output token and its band, as ``treering
    plan --format json``: a dict with "ranked" (the choices whose band meets the fastest's first, as a tie, least
    time across nodes first; then the rest, fastest first: tp, cp, combine, algo ("none" for TP only), step_s
    with its band, within_best_band, cross_node time_s, calls and bytes, tokens_per_s, memory, max_seq_len,
    extrapolation, and simulated_step_s for the first `confirm`), "fastest_rank", "ranking" (the rule in words),
    "not_fitting", "skipped" and the uncertainty behind the bands.

    seq_len: one context length. workload: a preset, a YAML file or a Hugging Face config.json; batch replaces
    its batch. gpus_max: use at most this many GPUs (None: all). algos: the combines to try (None: all eight).
    MoE models also try expert parallelism (ep, micro_batches in each choice; ep_kernel moves the tokens).
    tpot_target_ms: each choice at the largest batch ("batch") whose time per output token meets it, ranked by
    tokens_per_s_per_gpu ("too_slow": those that miss it at their smallest batch).
    """
    target = None if tpot_target_ms is None else float(tpot_target_ms)
    return _treering.plan(_cluster(cluster), _one_length(seq_len), str(workload), _optional_count(batch, "batch"),
                          _optional_count(gpus_max, "gpus_max"), _names(algos, []), str(impl),
                          _optional_count(confirm, "confirm", minimum=0), target, str(ep_kernel))


def moe_exchange(cluster, op="moe-dispatch", workload="deepseek-v3", batch=128, ep_kernel="low-latency", dtype=None,
                 redundant_experts=0, expert_skew=1.0, gpus=None, engines="model"):
    """An MoE layer's dispatch or combine over the GPUs as the EP group, as ``treering collective --op moe-dispatch
    --format json``: one dict per batch with time_s and its band, latency_s, transfer_s, the bytes a GPU sends
    through its NICs and over NVLink, the destinations per token and, with engines "sim", the replay on the routes.

    op: "moe-dispatch" or "moe-combine". batch: tokens a GPU sends (an int or a list). ep_kernel: "low-latency",
    "normal" or "nccl". dtype: "fp8" or "bf16" (None: fp8 dispatch, bf16 combine).
    """
    if isinstance(engines, str):
        engines = engines.split(",")
    batches = [int(b) for b in batch] if isinstance(batch, (list, tuple)) else [int(batch)]
    return _treering.moe_exchange(_cluster(cluster), str(op), str(workload), batches, str(ep_kernel), str(dtype or ""),
                                  int(redundant_experts), float(expert_skew), _ints(gpus, "gpus"),
                                  [str(e) for e in engines])


def validate(cluster, files, engines="model", impl=None):
    """Measurements beside the predictions, as ``treering validate --format json``: a dict with "cases" (each
    measured case with measured_s, predicted_s and rel_error per engine, and why it extrapolates) and "summary"
    (median, p90 and max |error| per engine and operation).

    files: a path or a list: nccl-tests logs (every *_perf binary), bytes,time CSVs, treering-realrun bench JSON
    (collectives, send/recv) and decode JSON; engines: "model", "sim" or both. Or attention benchmarks (the compute
    model kernel by kernel: "cases" with measured_s, predicted_s, rel_error, shape_calibrated; "summary" with the
    median and max |error|) or decode steps (the step model part by part), each kind apart, by the model alone.
    Or a serving engine's benchmarks (vLLM bench latency or bench serve JSON, SGLang bench_one_batch lines), predicted like for like with the
    profile `impl` (None: efficient; a fitted one from calibrate()): "runs" with measured_s, predicted and
    rel_error, "summary" with the median |error|.
    """
    return _treering.validate(_cluster(cluster), _paths(files), _names(engines, ["model"]), str(impl or ""))


def calibrate(cluster, files, output, tokens=None, impl=None, fit=None):
    """``treering calibrate FILES --cluster CLUSTER -o OUTPUT``, either kind of run, returning what ``--format
    json`` prints.

    Benchmarks (nccl-tests logs, bytes,time CSVs, treering-realrun bench JSON for collectives, send/recv and
    attention, treering-realrun step JSON) fit the cluster: its network (parameters, errors before and after,
    send/recv bands), its attention kernel ("attention": one HBM efficiency and launch overhead, then a line per
    kernel shape) and its decode step ("step": part by part). The calibrated cluster file is written to `output`
    (the cluster's edits and node counts written in) and the result has "cluster": it, loaded. tokens: fit the
    attention benchmarks at these token counts only ("1k,16k" or a list). What the command notes on stderr
    (loopback steps left out, shapes not fitted) is warned (warnings.warn) and listed under "notes".

    Timed decodes (a timings CSV, treering-realrun decode JSON) fit an implementation profile's overheads: the
    fitted profile is written to `output` (use it as impl=output). cluster: the cluster realrun decode files
    ran on (None for a CSV, whose rows name theirs). impl: the prior profile (None: treering-realrun-cpu for
    realrun cpu decodes, else efficient). fit: the overheads to fit (kernel_launch, collective_call,
    host_round_trip, first_call; None: every one the timings depend on).

    A serving engine's benchmarks (vLLM bench latency or bench serve JSON, SGLang bench_one_batch lines) fit the profile `impl`'s (None:
    efficient's) engine work a step ("engine_step": fixed_s, per_sequence_s); the fitted profile is written to
    `output` (use it as impl=output).
    """
    core = None if cluster is None else _cluster(cluster)
    result = _treering.calibrate(core, _paths(files), os.fspath(output), _lengths(tokens) if tokens else [],
                                 str(impl or ""), _names(fit, []))
    if "collectives" in result:  # a cluster calibrated
        result["cluster"] = load_cluster(result["output"])
    return result


# What `treering sensitivity` looks for in a cluster file (shorthand paths: every node group's, GPU model's,
# the network's); those the file has, as positive numbers, are scaled. The compiled core's list.
SENSITIVITY_PARAMETERS = _treering.SENSITIVITY_PARAMETERS


def sensitivity(cluster, seq_len, parameters=None, algos=None, workload="paper-mha16", batch=None, step=0.05,
                split="equal", impl="efficient"):
    """Which cluster parameters move the model's latency most: ``treering sensitivity``'s computation. Each
    parameter scaled by 1 +- step and the elasticity d ln(latency) / d ln(parameter) taken by central difference,
    ln(L(1+step) / L(1-step)) / ln((1+step) / (1-step)). -1: latency halves when the parameter doubles; 0: no
    effect.

    One record per (parameter, algorithm): parameter, value (as written, the first group's), algo, latency_s
    (unscaled), elasticity. parameters: setting paths (None: SENSITIVITY_PARAMETERS the file has).
    """
    if isinstance(parameters, str):
        parameters = [parameters]
    return _treering.sensitivity(_cluster(cluster), _one_length(seq_len), list(parameters or []), _algos(algos),
                                 str(workload), batch, float(step), str(split), str(impl))


# What people write, in the types the compiled module takes.

def _cluster(cluster):
    return _wrapped(cluster)._impl


def _wrapped(cluster):
    if isinstance(cluster, Cluster):
        return cluster
    if isinstance(cluster, str):
        return load_cluster(cluster)
    raise TypeError(f"cluster: a Cluster, a preset name or a YAML file path, not {type(cluster).__name__}")


def _lengths(seq_len):
    items = seq_len if isinstance(seq_len, (list, tuple)) else [seq_len]
    out = []
    for item in items:
        if isinstance(item, str):
            out.extend(_treering.parse_token_counts(item))
        elif isinstance(item, numbers.Integral) and not isinstance(item, bool):
            out.extend(_treering.parse_token_counts(str(int(item))))  # its range check and message (InputError)
        elif isinstance(item, numbers.Real) and float(item).is_integer():  # 1e6
            out.extend(_treering.parse_token_counts(str(int(item))))
        else:
            raise TypeError(f"seq_len: an int, a string such as '80k:1M:x2', or a list of those, not {item!r}")
    return out


def _one_length(seq_len):
    lengths = _lengths(seq_len)
    if len(lengths) != 1:
        raise InputError(f"seq_len takes one length here, got {len(lengths)}")
    return lengths[0]


def _names(value, default):
    if value is None:
        return list(default)
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if not isinstance(value, (list, tuple, set, frozenset)):  # one enum member (treering.Algorithm.tree)
        return [str(value)]
    return [str(v) for v in value]


def _algos(algos):
    return _names(algos, _treering.default_algorithms())


def _ints(value, what):
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple, range)) else [value]
    for item in items:
        if not isinstance(item, numbers.Integral) or isinstance(item, bool):
            raise TypeError(f"{what}: an int or a list of ints, not {item!r}")
    return [int(item) for item in items]


def _paths(files):
    items = files if isinstance(files, (list, tuple)) else [files]
    return [os.fspath(item) for item in items]


def _optional_count(value, what, minimum=1):
    """None as 0 (the command's default), else an int of at least `minimum`."""
    if value is None:
        return 0
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{what}: an int, not {value!r}")
    if value < minimum:
        raise InputError(f"{what} must be at least {minimum}, got {value}")
    return int(value)


def _value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _edits(set, scale):
    """(path, value, factor) tuples: the sets (factor 0), then the scales."""
    edits = []
    if isinstance(set, str):
        set = [set]
    if isinstance(set, dict):
        edits += [(str(path), _value(value), 0.0) for path, value in set.items()]
    elif set is not None:
        for item in set:
            path, value = _treering.parse_setting(item) if isinstance(item, str) else item
            edits.append((str(path), _value(value), 0.0))
    for path, factor in (scale or {}).items():
        if not float(factor) > 0:
            raise InputError(f"scale {path}: the factor must be positive, got {factor}")
        edits.append((str(path), "", float(factor)))
    return edits

