"""The `tomacs` command: one module per command group, registered here in the order `--help` lists them,
and each method's own commands, which the method names (`commands`, tomacs.methods.base) and registers.

Jobs (train, evaluate) go through `hydra.main`, so multirun, launchers and output directories
behave as Hydra users expect; before that, every override is composed once so a typo fails in
one line with the valid choices instead of a traceback. Read-only commands use the compose API.
"""

from __future__ import annotations

import os


def _offline_env() -> None:
    """Set before any heavy import: nothing may hang or phone home for lack of internet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    os.environ.setdefault("WANDB_MODE", "offline")
    os.environ.setdefault("WANDB_ERROR_REPORTING", "false")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if os.environ.get("TOMACS_ONLINE", "") not in ("1", "true", "True"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


_offline_env()

import typer  # noqa: E402

from tomacs.cli import (  # noqa: E402
    analyze,
    calibrate,
    config,
    docs,
    plan,
    report,
    run,
    sim,
    transcripts,
    view,
)
from tomacs.cli.common import EXTRA  # noqa: E402
from tomacs.methods.registry import method_extras  # noqa: E402

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="tomacs: train and compare communication topologies for multi-round LLM multi-agent systems.",
)
app.command(context_settings=EXTRA)(run.train)
app.command(context_settings=EXTRA)(run.evaluate)
app.command(context_settings=EXTRA)(plan.plan)
app.command("show-config", context_settings=EXTRA)(config.show_config)
app.command("list")(config.list_options)
app.command(context_settings=EXTRA)(calibrate.calibrate)  # old spelling of `tomacs sim ...`
for register in method_extras("commands"):  # every method's own commands: `register(app)` adds them
    if not callable(register):
        raise TypeError(f"a method's commands must name functions register(app), got {register!r}")
    register(app)
app.add_typer(analyze.analyze_app, name="analyze")
app.add_typer(transcripts.transcripts_app, name="transcripts")
app.add_typer(sim.sim_app, name="sim")
app.add_typer(docs.docs_app, name="docs")
app.command()(transcripts.replay)
app.command()(report.report)
app.command("paired-eval")(report.paired_eval)
app.command("check-targets")(report.check_targets)
app.command("diagnose")(analyze.diagnose)  # old spelling of `tomacs analyze credits`
app.command(context_settings=EXTRA)(config.tables)
app.command()(view.view)

# The old spellings still registered above -> what they now are: each prints a one-line notice and runs
# its new spelling's code; the CLI reference (tomacs.cli.docs) marks them.
RENAMED = {"calibrate": "tomacs sim check|fit|fit-episodes|diagnose", "diagnose": "tomacs analyze credits"}


def main() -> None:
    # Ctrl-C inside a job prints its resume command (hydra_app); anywhere else typer exits 130
    app()


__all__ = ["RENAMED", "app", "main"]
