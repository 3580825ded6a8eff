"""The one trainer for every learned method: REINFORCE over episodes from the shared executor.

A method supplies `loss(state, episodes, utilities)`; this module owns the loop, the optimiser,
the run log, per-epoch checkpoints, best-by-validation selection and resume, so that every method
is trained under the same budget and bookkeeping.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.embed import encode_totals
from tomacs.metrics import summarize
from tomacs.progress import Progress, Running
from tomacs.seeding import stable_seed

if TYPE_CHECKING:
    from tomacs.run import Components


def make_optimizer(name: str, params: list[Any], lr: float) -> Any:
    import torch

    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr)
    raise ValueError(f"unknown optimizer '{name}'; valid: adam, adamw, sgd")


def save_checkpoint(path: Path, method: Any, optimizer: Any, extra: dict[str, Any]) -> None:
    """``method_name`` and ``embedder`` travel with the weights, so loading can say which method
    and which embedder a checkpoint needs instead of failing on tensor shapes."""
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "method": method.state_dict(),
            "optimizer": optimizer.state_dict() if optimizer else None,
            "method_name": getattr(method, "name", None),
            **extra,
        },
        tmp,
    )
    tmp.replace(path)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint's dict; a missing, unreadable or foreign file fails in one line naming it."""
    import torch

    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - pickle/zip/torch errors come in many types
        raise ValueError(
            f"checkpoint {path} cannot be read ({_first_line(exc)}); pass the best.pt or checkpoint.pt "
            "of a `tomacs train` run"
        ) from None
    if not isinstance(ckpt, dict) or not isinstance(ckpt.get("method"), dict):
        raise ValueError(
            f"checkpoint {path} is not a tomacs checkpoint (no method state); pass the best.pt or "
            "checkpoint.pt of a `tomacs train` run"
        )
    return ckpt


def _embedder_hint(saved: dict[str, Any], method: Any) -> str:
    """Checkpoints written before the embedder was recorded still carry the embedding size."""
    from tomacs.embed import EMBEDDER_DIMS

    theirs = (saved.get("meta") or {}).get("emb_dim")
    mine = (method.state_dict().get("meta") or {}).get("emb_dim") if hasattr(method, "state_dict") else None
    names = [k for k, d in EMBEDDER_DIMS.items() if d == theirs]
    if theirs is None or theirs == mine or not names:
        return ""
    emb = names[0]
    return f"was trained with embedder={emb} ({theirs}-dim embeddings, this run: {mine}); add embedder={emb}"


def load_checkpoint(method: Any, path: Path, optimizer: Any | None = None) -> dict[str, Any]:
    ckpt = read_checkpoint(path)
    name = getattr(method, "name", "?")
    saved = ckpt["method"]
    theirs = ckpt.get("method_name")
    mine_net = set((method.state_dict() or {}).get("net") or {})
    their_net = set(saved.get("net") or {}) if isinstance(saved.get("net"), dict) else set()
    if theirs is None and mine_net and their_net and not mine_net & their_net:
        theirs = "another method"  # written before checkpoints named their method
    if theirs is not None and theirs != name:
        fix = f"add method={theirs}" if theirs != "another method" else f"pass a checkpoint of a {name} run"
        raise ValueError(f"checkpoint {path} was written by {theirs}, not method={name}; {fix}")
    if ckpt.get("embedder") and getattr(method, "embedder_name", ckpt["embedder"]) != ckpt["embedder"]:
        raise ValueError(
            f"checkpoint {path} was trained with embedder={ckpt['embedder']}; add embedder={ckpt['embedder']}"
        )
    try:
        method.load_state_dict(saved)
    except (ValueError, RuntimeError, KeyError, TypeError, AttributeError) as exc:
        why = _embedder_hint(saved, method) or f"does not fit this {name}: {_first_line(exc)}"
        raise ValueError(f"checkpoint {path} {why}") from None
    if optimizer is not None and ckpt.get("optimizer"):
        optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt


def settle_embedder(cfg: Any) -> None:
    """Resolve the run's embedder once (tomacs.config.resolve_embedder), taking a checkpoint's
    recorded embedder into account, before anything is built or written."""
    from tomacs.config import resolve_embedder

    path = cfg.get("checkpoint")
    saved = read_checkpoint(Path(path)).get("embedder") if path and Path(path).is_file() else None
    resolve_embedder(cfg, saved, path)


def utility(episode: Any) -> float:
    """u_q(τ): 1 for a correct final answer, 0 otherwise (TodyComm §4.1, task utility)."""
    return 1.0 if episode.correct else 0.0


def credit_gap(episodes: list[Any], n: int, rounds: int) -> float | None:
    """Mean decision credit of honest minus adversarial agents (ground truth), None without credits.

    Logged per iteration because it moves long before Acc does: a policy that is learning to
    detect shows a growing gap even while the accuracy of a 32-question batch is still noise."""
    hon: list[float] = []
    adv: list[float] = []
    for ep in episodes:
        credits = getattr(ep.decision, "credits", None) if ep.decision is not None else None
        if credits is None:
            continue
        for i, y in enumerate(ep.plan.labels(n, rounds)):
            (adv if y else hon).append(float(credits[i]))
    if not hon or not adv:
        return None
    return float(np.mean(hon) - np.mean(adv))


def trim_log(path: Path, start_epoch: int) -> None:
    """Keep only the log lines of epochs the checkpoint holds: a run stopped mid-epoch logged
    iterations that the resume runs again, and the log must show each iteration once."""
    if not path.exists():
        return
    keep = []
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            break  # a torn last line from a kill
        if isinstance(rec, dict) and int(rec.get("epoch", start_epoch)) < start_epoch:
            keep.append(line)
    path.write_text("".join(x + "\n" for x in keep))


def _pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}"


def train(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, Any]:
    cfg = comps.cfg
    method = comps.method
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    lr = float(cfg.method.get("lr") or cfg.train.lr)
    optimizer = make_optimizer(str(cfg.train.optimizer), method.parameters(), lr)
    ckpt_path, best_path = out_dir / "checkpoint.pt", out_dir / "best.pt"
    log_path = out_dir / "train_log.jsonl"
    start_epoch, iteration, best_val, since_best, best_acc = 0, 0, -1.0, 0, None
    resume_from = (
        Path(cfg.checkpoint) if cfg.get("checkpoint") else (ckpt_path if ckpt_path.exists() else None)
    )
    if resume_from is not None:
        ck = load_checkpoint(method, resume_from, optimizer)
        if comps.executor.crs is not None and ck.get("credibility"):
            comps.executor.crs.state.load(ck["credibility"])
        start_epoch, iteration, best_val, since_best = (
            ck.get("epoch", -1) + 1,
            ck.get("iteration", 0),
            ck.get("best_val", -1.0),
            ck.get("since_best", 0),
        )
        best_acc = ck.get("best_val_acc")
    trim_log(log_path, start_epoch)
    epochs = int(cfg.train.epochs)
    patience = cfg.train.get("patience")
    bs = int(cfg.train.batch_size)
    train_qs = list(comps.train_qs)
    if not train_qs:
        raise ValueError("train.size is 0 or the benchmark has no training split; nothing to train on")
    t0 = time.perf_counter()
    prog = progress or Progress(enabled=False)
    n_iters = -(-len(train_qs) // bs)

    def out_of_patience(since: int) -> bool:
        """Early stopping: validation has not improved for `patience` epochs."""
        return patience is not None and bool(comps.val_qs) and since >= int(patience)

    stopped_early = out_of_patience(since_best)  # a resumed run that had already stopped stays stopped
    epochs_done = start_epoch
    for epoch in range(start_epoch, epochs):
        if stopped_early:
            break
        method.train_mode(True)
        order = np.random.default_rng(stable_seed(cfg.seed, "shuffle", epoch)).permutation(len(train_qs))
        qs = [train_qs[i] for i in order]
        running = Running(n, rounds)
        with prog.task(f"train epoch {epoch + 1}/{epochs}", total=len(qs), unit="questions") as task:
            for b in range(0, len(qs), bs):
                batch = qs[b : b + bs]
                enc0, enc_s0 = encode_totals()
                episodes, state = comps.executor.run_batch(
                    batch, method, train=True, phase=f"train{epoch}", on_call=task
                )
                utils = [utility(e) for e in episodes]
                loss = method.loss(state, episodes, utils)
                loss_value = None
                if loss is not None and getattr(loss, "requires_grad", False):
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    loss_value = float(loss.detach().cpu())
                method.on_iteration_end(iteration)
                m = summarize(episodes, n, rounds)
                enc1, enc_s1 = encode_totals()
                rec = {
                    "iteration": iteration,
                    "epoch": epoch,
                    "loss": loss_value,
                    "train_acc": m["acc"],
                    "train_adacc": m["adacc"],
                    "train_token": m["token"],
                    "credit_gap": credit_gap(episodes, n, rounds),
                    "wall_s": round(time.perf_counter() - t0, 3),
                    "encoded": enc1 - enc0,  # MiniLM texts this iteration (0 with the hashing embedder)
                    "encode_s": round(enc_s1 - enc_s0, 3),
                }
                with log_path.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
                if comps.tracker is not None:
                    comps.tracker.log(rec, step=iteration)
                iteration += 1
                task.step(
                    len(batch), iter=f"{b // bs + 1}/{n_iters}", loss=loss_value, **running.add(episodes)
                )
        val_acc = val_adacc = None
        if comps.val_qs:
            method.train_mode(False)
            eps: list[Any] = []
            val_running = Running(n, rounds)
            title = f"train epoch {epoch + 1}/{epochs} validating"
            with prog.task(title, total=len(comps.val_qs), unit="questions") as vtask:
                for b in range(0, len(comps.val_qs), bs):
                    e, _ = comps.executor.run_batch(
                        comps.val_qs[b : b + bs], method, train=False, phase="val", on_call=vtask
                    )
                    eps.extend(e)
                    vtask.step(len(e), **val_running.add(e))
            vm = summarize(eps, n, rounds)
            val_acc, val_adacc = vm["acc"], vm["adacc"]
            vrec = {
                "epoch": epoch,
                "iteration": iteration,
                "val_acc": vm["acc"],
                "val_adacc": vm["adacc"],
                "val_token": vm["token"],
                "val_credit_gap": credit_gap(eps, n, rounds),
            }
            with log_path.open("a") as f:
                f.write(json.dumps(vrec) + "\n")
            if comps.tracker is not None:
                comps.tracker.log(vrec, step=max(iteration - 1, 0))
        # validation Acc picks the checkpoint (the reward); ADAcc only breaks ties, which are common
        # on a few dozen questions. No validation: keep the last epoch.
        tie = val_adacc if val_adacc is not None and val_adacc == val_adacc else 0.0
        score = val_acc + 1e-3 * tie if val_acc is not None else -float(epoch)
        is_best = val_acc is None or score > best_val
        if is_best and val_acc is not None:
            best_val, best_acc = score, val_acc
        since_best = 0 if is_best else since_best + 1
        stopped_early = out_of_patience(since_best)
        if val_acc is not None:
            prog.log(
                f"train epoch {epoch + 1}/{epochs} validation | Acc {_pct(val_acc)} | ADAcc {_pct(val_adacc)}"
                f" | {'new best' if is_best else f'no improvement for {since_best}'}"
                + (f" | stopping early (patience {patience})" if stopped_early else "")
            )
        extra = {
            "epoch": epoch,
            "iteration": iteration,
            "best_val": best_val,
            "best_val_acc": best_acc,
            "since_best": since_best,
            "embedder": cfg.get("embedder"),
        }
        if comps.executor.crs is not None:  # credibility is part of the run's learned state
            extra["credibility"] = comps.executor.crs.state.to_dict()
        save_checkpoint(ckpt_path, method, optimizer, extra)
        epochs_done = epoch + 1
        if is_best:
            save_checkpoint(best_path, method, optimizer, extra)
    if best_path.exists():
        load_checkpoint(method, best_path)
    method.train_mode(False)
    return {
        "epochs": epochs,
        "epochs_run": epochs_done,
        "stopped_early": bool(stopped_early),
        "iterations": iteration,
        "best_val_acc": best_acc,
        "train_wall_s": round(time.perf_counter() - t0, 3),
        "resumed_from_epoch": start_epoch,
    }
