"""`tomacs gsafeguard-data`: G-Safeguard's labelled training conversations, generated through the
executor on the run's backbone. The method names `register` (`GSafeguard.commands`) and the `tomacs`
CLI calls it while it assembles its commands (tomacs.cli); the CLI's own modules are imported inside
the functions, since this module is loaded while tomacs.cli itself is being imported."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add G-Safeguard's commands to the `tomacs` app."""
    from tomacs.cli.common import EXTRA

    app.command("gsafeguard-data", context_settings=EXTRA)(gsafeguard_data)


def gsafeguard_data(ctx: typer.Context) -> None:
    """Generate (or finish) G-Safeguard's labelled training conversations through the executor on the
    run's backbone, into method.data (default: a file named by the settings in
    outputs/gsafeguard/).
    OVERRIDES compose as for `tomacs train` (benchmark=mmlu backbone=sim seed=0 method.regime=dynamic);
    then train with `tomacs train method=gsafeguard method.data=<file> ...`."""
    import shlex
    import time
    from pathlib import Path

    from tomacs.cli.common import check_out_file, console, fail
    from tomacs.config import ConfigError, compose
    from tomacs.extras.gsafeguard.data import DataSpec, default_path, ensure
    from tomacs.extras.gsafeguard.trainer import detector
    from tomacs.job.components import backbone_label, build
    from tomacs.job.progress import Progress
    from tomacs.launch.spec import job_spec

    overrides = list(ctx.args or [])
    if any(o.lstrip("+~").startswith(("hydra.", "hydra/", "mode=")) for o in overrides):
        fail("hydra.* and mode overrides do not apply here; set the output file with method.data=FILE")
    if any(o.startswith("method=") and o != "method=gsafeguard" for o in overrides):
        fail("`tomacs gsafeguard-data` makes G-Safeguard's conversations; drop the method= override")
    overrides = [o for o in overrides if o != "method=gsafeguard"]
    t0 = time.perf_counter()
    try:
        run = job_spec(compose(["method=gsafeguard", *overrides]))
        comps = build(run, need_train=True)
        backbone = str(getattr(comps.backbone, "name", run.backbone.name))
        spec = DataSpec.of(run, backbone, comps.train_qs)
        data = detector(comps).settings.data
        path = Path(data) if data else default_path(spec)
        check_out_file(path, "choose a writable method.data=FILE")
        records, stats = ensure(
            spec,
            path,
            comps.train_qs,
            comps.backbone,
            comps.bench.roles_key,
            run.eval.batch_size,
            Progress(),
        )
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    share = sum(sum(r["labels"]) for r in records) / max(1, sum(len(r["labels"]) for r in records))
    label = backbone_label(run, comps.backbone)
    console.print(
        f"{len(records)} conversations ({stats['generated']} generated now, {stats['calls']} LLM calls, "
        f"{time.perf_counter() - t0:.1f} s) | backbone={label} | benchmark={spec.benchmark} | "
        f"regime={spec.regime} | {spec.agents} agents x {spec.rounds} turns | "
        f"adversarial share {100 * share:.1f} %",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"data: {path}", highlight=False, soft_wrap=True)
    keep = [o for o in overrides if not o.startswith("method.data=")]
    console.print(
        "train: tomacs train method=gsafeguard "
        + " ".join(shlex.quote(o) for o in [*keep, f"method.data={path}"]),
        highlight=False,
        soft_wrap=True,
    )
