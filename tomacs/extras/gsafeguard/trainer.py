"""G-Safeguard's trainer (`SUPERVISED`, the `trainer` the method names), a supervised detector's:
labelled conversations in, one logit per agent out, BCE-with-logits; the other learned methods'
REINFORCE trainer (`tomacs.training.reinforce`) is for task rewards.
Both keep epochs, best.pt, checkpoint.pt, resume and train_log.jsonl through `tomacs.training.core`.

Order of a job (the public train.py's recipe, on tomacs' files): the conversations
(`tomacs.extras.gsafeguard.data`, generated through the executor or read from `method.data`) are embedded
with the run's embedder and split (seeded) into training and held-out conversations; each epoch
takes Adam (weight decay) steps over shuffled batches, steps a cosine learning-rate schedule, and
scores the detector on the training conversations and the held-out ones (node accuracy = ADAcc of
the 0.5 threshold); the checkpoint with the best held-out accuracy is kept (best.pt). Besides,
after every epoch the defence runs through the executor on the run's validation questions under
the run's attack (the dynamic adversaries), which gives the evaluation ADAcc curve of TodyComm's
Fig. 4 beside the training curve; it never picks the checkpoint. Every epoch writes one line of
train_log.jsonl and checkpoint.pt, so a killed job resumes from its last finished epoch with the
same numbers (dropout and shuffling are seeded per epoch).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tomacs.embedding.embedders import Embedder
from tomacs.extras.gsafeguard.data import DataSpec, ensure
from tomacs.job.components import Components
from tomacs.job.progress import Progress, pct
from tomacs.methods.gsafeguard import GraphSample, GSafeguard, graph_sample
from tomacs.methods.registry import method_settings
from tomacs.metrics import summarize
from tomacs.runspec.spec import RunSpec
from tomacs.seeding import stable_seed
from tomacs.training.core import EpochLoop, Trainer, greedy_val_episodes

DATA_FILE = "gsafeguard_data.jsonl"
_CHUNK = 256


def data_path(spec: RunSpec, out_dir: Path) -> Path:
    """`method.data` when given (shared between jobs), else a file in the run directory."""
    given = method_settings(spec).data  # type: ignore[attr-defined]
    return Path(str(given)) if given else out_dir / DATA_FILE


def featurize(
    embedder: Embedder, emb_dim: int, records: list[dict[str, Any]], progress: Progress
) -> list[GraphSample]:
    """Every utterance embedded with the run's embedder: seq[i, t] = agent i's turn-t text."""
    texts = [t for r in records for turn in r["texts"] for t in turn]
    vecs: list[np.ndarray] = []
    with progress.task("gsafeguard embeddings", total=len(texts), unit="texts") as task:
        for i in range(0, len(texts), _CHUNK):
            part = texts[i : i + _CHUNK]
            vecs.append(np.asarray(embedder.embed(part), dtype=np.float32))
            task.step(len(part))
    flat = np.concatenate(vecs) if vecs else np.zeros((0, emb_dim), dtype=np.float32)
    if flat.shape[1:] != (emb_dim,):
        raise ValueError(f"embedder gives {flat.shape[1:]} vectors, the detector expects {emb_dim}")
    out, k = [], 0
    for r in records:
        turns, n = len(r["texts"]), len(r["texts"][0])
        seq = flat[k : k + turns * n].reshape(turns, n, -1).transpose(1, 0, 2)
        k += turns * n
        out.append(graph_sample(seq, [tuple(p) for p in r["pairs"]], r["labels"]))
    return out


def split(n: int, val_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """A seeded shuffle, then the public code's cut: the first int(n * (1 - val_fraction)) train."""
    order = np.random.default_rng(stable_seed(seed, "gsafeguard-split")).permutation(n)
    cut = int(n * (1.0 - val_fraction) + 1e-9)
    return sorted(int(i) for i in order[:cut]), sorted(int(i) for i in order[cut:])


def detector(comps: Components) -> GSafeguard:
    """The job's method, which this trainer trains: G-Safeguard's detector (it names this trainer)."""
    if not isinstance(comps.method, GSafeguard):
        raise TypeError(f"the gsafeguard trainer trains method=gsafeguard, not {comps.method.name!r}")
    return comps.method


def node_accuracy(method: GSafeguard, samples: list[GraphSample]) -> tuple[float | None, float | None]:
    """(accuracy of `score >= threshold` against the labels over every (conversation, agent), mean
    BCE) with the network in evaluation mode; (None, None) for no samples."""
    if not samples:
        return None, None
    import torch

    right = total = 0
    bce = 0.0
    for i in range(0, len(samples), _CHUNK):
        part = samples[i : i + _CHUNK]
        p = method.scores(part).reshape(-1)
        y = np.concatenate([s.y for s in part])
        right += int(((p >= method.threshold) == (y > 0.5)).sum())
        total += y.size
        pt = torch.as_tensor(np.clip(p, 1e-7, 1 - 1e-7))
        bce += float(
            torch.nn.functional.binary_cross_entropy(pt, torch.as_tensor(y, dtype=pt.dtype), reduction="sum")
        )
    return right / total, bce / total


def _optimizer(method: GSafeguard, spec: RunSpec) -> tuple[Any, Any]:
    import torch

    m = method.settings
    lr = float(m.lr or spec.train.lr)
    opt = torch.optim.Adam(method.parameters(), lr=lr, weight_decay=float(m.weight_decay))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=int(m.cosine_tmax), eta_min=float(m.eta_min)
    )
    return opt, sched


@dataclass
class Prepared:
    """The labelled conversations of a job, embedded and split."""

    path: Path
    spec: DataSpec
    records: list[dict[str, Any]]
    stats: dict[str, Any]  # generated, calls, wall_s (tomacs.extras.gsafeguard.data.ensure)
    samples: list[GraphSample]
    train_idx: list[int]
    val_idx: list[int]
    featurize_s: float

    def data_summary(self) -> dict[str, object]:
        """results.json -> train.data: where the conversations are, how they were made, what they hold."""
        meta = {k: v for k, v in self.spec.meta().items() if k != "questions"}
        labels = [y for r in self.records for y in r["labels"]]
        return {
            "path": str(self.path),
            "conversations": len(self.records),
            **self.stats,
            **meta,
            "questions": len(self.spec.questions),
            "adversary_share": float(np.mean(labels)) if labels else None,
        }


def prepare(comps: Components, out_dir: Path, prog: Progress) -> Prepared:
    """Generate (or read) the conversations on the run's backbone, embed them with the run's embedder
    (the executor's, so MiniLM is loaded once per job), split them."""
    run, method = comps.spec, detector(comps)
    path = data_path(run, out_dir)
    spec = DataSpec.of(run, str(getattr(comps.backbone, "name", run.backbone.name)), comps.train_qs)
    records, stats = ensure(
        spec, path, comps.train_qs, comps.backbone, comps.bench.roles_key, run.eval.batch_size, prog
    )
    t0 = time.perf_counter()
    embedder = comps.executor.embedder or method.embedder
    samples = featurize(embedder, method.emb_dim, records, prog)
    val_fraction = method.settings.val_fraction
    train_idx, val_idx = split(len(samples), val_fraction, run.seed)
    if not train_idx:
        raise ValueError(
            f"{len(samples)} conversations leave none for training at method.val_fraction="
            f"{val_fraction}; raise method.samples or lower method.val_fraction"
        )
    return Prepared(path, spec, records, stats, samples, train_idx, val_idx, time.perf_counter() - t0)


# the Standing fields the detector's checkpoints carry, in their order (tomacs.training.core.EpochLoop)
CHECKPOINT_KEYS = ("epoch", "iteration", "best_val", "best_epoch", "best_val_acc")


def train(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, object]:
    """Generate or read the conversations, train the detector, keep the best epoch; resumable."""
    spec, method = comps.spec, detector(comps)
    prog = progress or Progress(enabled=False)
    t0 = time.perf_counter()
    data = prepare(comps, out_dir, prog)
    train_set = [data.samples[i] for i in data.train_idx]
    held_out = [data.samples[i] for i in data.val_idx]
    opt, sched = _optimizer(method, spec)
    loop = EpochLoop(
        out_dir,
        method,
        opt,
        label="gsafeguard",
        epochs=method.settings.epochs,
        keys=CHECKPOINT_KEYS,
        tracker=comps.tracker,
        progress=prog,
        t0=t0,
    )
    ck = loop.resume(spec.checkpoint)
    if ck is not None and ck.get("scheduler"):
        sched.load_state_dict(ck["scheduler"])
    at = loop.at
    batch_size, seed = method.settings.batch_size, spec.seed
    # what picks best.pt, as the log lines name it: (a new best, none)
    judged = (
        ("new best held-out ADAcc", "no improvement in held-out ADAcc")
        if held_out
        else ("kept: no held-out conversations, so the latest epoch is the best", "not kept")
    )
    for epoch in loop.epochs():
        title = loop.title(epoch)
        loss, steps = _epoch(method, train_set, batch_size, seed, epoch, opt, prog, title)
        at.iteration = int(at.iteration) + steps
        lr = float(opt.param_groups[0]["lr"])
        sched.step()
        train_adacc, _ = node_accuracy(method, train_set)
        data_val_adacc, data_val_loss = node_accuracy(method, held_out)
        vm = _defend(comps, prog, f"{title} defending the validation questions")
        score = data_val_adacc if data_val_adacc is not None else float(epoch)  # no held-out: keep the last
        is_best = loop.judge(epoch, score, best_epoch=epoch, best_val_acc=vm.get("acc"))
        rec = {
            "epoch": epoch,
            "iterations": at.iteration,
            "loss": loss,
            "lr": lr,
            "train_adacc": train_adacc,
            "data_val_adacc": data_val_adacc,
            "data_val_loss": data_val_loss,
            "val_acc": vm.get("acc"),
            "val_adacc": vm.get("adacc"),
            "val_adacc_balanced": vm.get("adacc_balanced"),
            "val_token": vm.get("token"),
            "best": is_best,
            "wall_s": loop.wall_s(),
        }
        loop.log(rec, step=epoch)
        prog.log(
            f"{title} | loss {loss:.4f} | train ADAcc {pct(train_adacc)}"
            f" | held-out ADAcc {pct(data_val_adacc)}"
            f" | validation Acc {pct(vm.get('acc'))} ADAcc {pct(vm.get('adacc'))}"
            + f" | {judged[0] if is_best else judged[1]}"
        )
        loop.save(is_best, {"scheduler": sched.state_dict(), "embedder": spec.embedder})
    loop.finish()
    return {
        **loop.summary(),
        "best_epoch": at.best_epoch,
        "best_data_val_adacc": at.best_val if held_out else None,
        "train_wall_s": loop.wall_s(),
        "featurize_s": round(data.featurize_s, 3),
        "resumed_from_epoch": loop.start,
        "train_conversations": len(train_set),
        "val_conversations": len(held_out),
        "data": data.data_summary(),
    }


def _epoch(
    method: Any,
    train_set: list[GraphSample],
    batch_size: int,
    seed: int,
    epoch: int,
    opt: Any,
    prog: Progress,
    title: str,
) -> tuple[float, int]:
    """One pass in the epoch's seeded order; dropout drawn from a generator seeded by the epoch, so a
    resumed run repeats an uninterrupted one. Returns (mean batch loss, steps)."""
    import torch

    method.train_mode(True)
    order = np.random.default_rng(stable_seed(seed, "gsafeguard-shuffle", epoch)).permutation(len(train_set))
    devices = [method.device] if method.device.type == "cuda" else []
    losses = []
    with (
        torch.random.fork_rng(devices=devices),
        prog.task(title, total=len(order), unit="conversations") as task,
    ):
        torch.manual_seed(stable_seed(seed, "gsafeguard-dropout", epoch))
        for i in range(0, len(order), batch_size):
            batch = [train_set[int(j)] for j in order[i : i + batch_size]]
            loss, _, _ = method.labelled_loss(batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach().cpu()))
            task.step(len(batch), loss=losses[-1])
    method.train_mode(False)
    return float(np.mean(losses)), len(losses)


def _defend(comps: Components, prog: Progress, title: str) -> dict[str, float]:
    """The defence on the run's validation questions under the run's attack (Fig. 4's evaluation
    curve); {} without validation questions."""
    if not comps.val_qs:
        return {}
    eps = greedy_val_episodes(comps, comps.spec.eval.batch_size, prog, title)
    return summarize(eps, comps.ctx.n_agents, comps.ctx.rounds)


# the `trainer` GSafeguard names: its epochs are its own (method.epochs), its conversations come from
# `tomacs gsafeguard-data` or are generated by the job, so the plan counts only its validation walks
SUPERVISED = Trainer(
    train=train,
    walks_training=False,
    epochs=lambda method: int(method.settings.epochs),
    plan_note="training conversations are generated by `tomacs gsafeguard-data` (not counted here)",
)
