"""Real-LLM backbone through litellm: any hosted model or OpenAI-compatible server.

Why this shape:
* The executor hands over batches of requests from many agents and queries at once; we run them
  concurrently, bounded by one asyncio.Semaphore per endpoint so a local server (or a provider's
  rate limit) is not flooded.
* Every response is written to the persistent `ResponseCache` as soon as it arrives, so a run that
  stops (crash, quota, Ctrl-C) keeps everything it paid for, and re-runs / resumes / sweeps never
  pay twice. litellm's own cache is not used (its keys and persistence are not ours to control).
* Transient failures (429, 5xx, timeouts, dropped connections, malformed or empty replies) are
  retried with exponential backoff and jitter; permanent ones (400/401/403/404, exhausted quota)
  stop at once. After `max_retries` the batch raises `BackboneError`: the run stops rather than
  silently scoring a missing answer, and what is cached stays cached.
* Spend caps (`tomacs.backbones.spend`) reserve each paid call before it is sent, in a ledger the
  processes of a sweep share; rate limits (`tomacs.backbones.ratelimit`) pace every process on the
  machine through one token bucket, and a 429's Retry-After is a floor for the next try.
* The API key is only ever read from the environment variable named by `api_key_env`, at call
  time. It is never stored on the object, in the cache, in stats, or in repr/str.
* litellm is imported lazily (it takes seconds) with `LITELLM_LOCAL_MODEL_COST_MAP=True` and
  `LITELLM_MODE=PRODUCTION` set first and telemetry/callbacks off, so it never touches the network
  on import and never reads a stray `.env` file. `FAST_CALL_SETTINGS` trims litellm's per-call work;
  litellm itself reuses one HTTP client per (event loop, endpoint, key, timeout) across calls.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import warnings
import weakref
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from omegaconf import MISSING

from tomacs.backbones.base import BaseBackbone, GenerationReply, GenerationRequest, JobBenchmark
from tomacs.backbones.cache import ResponseCache, make_key
from tomacs.backbones.ratelimit import SharedBucket, default_state_path, retry_after_of
from tomacs.backbones.spend import SpendCapReached, SpendCaps, SpendGuard, SpendLedger, current_scope
from tomacs.tokens import count_chat_tokens, count_tokens

if TYPE_CHECKING:
    from tomacs.runspec.spec import RunSpec

__all__ = [
    "FAST_CALL_SETTINGS",
    "BackboneError",
    "LiteLLMBackbone",
    "LiteLLMSettings",
    "Price",
    "SpendCapReached",
    "import_litellm",
]

log = logging.getLogger(__name__)

DEFAULT_CACHE_PATH = "outputs/cache/responses.sqlite"
_RETRY_STATUS = {408, 409, 425, 429}
_HARD_TIMEOUT_SLACK_S = 10.0  # our own guard on top of the client timeout, in case a client hangs


class BackboneError(RuntimeError):
    """A request failed for good (permanent error, or transient errors beyond `max_retries`)."""


class _BadResponse(Exception):
    """The server answered 200 but the reply is unusable (no choices, empty content); retried."""


@dataclass(frozen=True)
class Price:
    """Price override in USD per million tokens (for models litellm has no price for)."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


_litellm_module: Any = None

# litellm settings that cut its per-call CPU, measured with `scripts/bench/backbone.py --options`
# (figures in its docstring). They change no result: cost still comes from litellm's price table.
FAST_CALL_SETTINGS: dict[str, Any] = {
    # litellm's aiohttp transport (its default, pinned here): its httpx transport costs about 2.5x the
    # CPU per call at concurrency 32. The env var DISABLE_AIOHTTP_TRANSPORT=True still overrides it.
    "disable_aiohttp_transport": False,
    "use_aiohttp_transport": True,
    # With redaction on, litellm deep-copies and redacts every reply for its loggers after the call;
    # tomacs registers no logger (callbacks are emptied below), so there is nothing to redact for.
    "turn_off_message_logging": False,
}


def _close_unrun(async_coroutine: Coroutine[Any, Any, Any]) -> None:
    """Stands in for litellm's logging-worker enqueue (see import_litellm)."""
    async_coroutine.close()


def import_litellm() -> ModuleType:
    """Import and configure litellm once, offline-safe. Returns the module."""
    global _litellm_module
    if _litellm_module is not None:
        return _litellm_module
    # Forced, not defaulted: the bundled cost map keeps import offline, PRODUCTION skips load_dotenv().
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_MODE"] = "PRODUCTION"
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    litellm.set_verbose = False
    # No callbacks at all, so prompts and replies never reach a litellm logger.
    litellm.callbacks = []
    litellm.input_callback = []
    litellm.success_callback = []
    litellm.failure_callback = []
    litellm.service_callback = []
    litellm._async_input_callback = []
    litellm._async_success_callback = []
    litellm._async_failure_callback = []
    for name, value in FAST_CALL_SETTINGS.items():
        setattr(litellm, name, value)
    # litellm still queues a success-logging coroutine per call on its background worker, and on a loop
    # change (one runner per batch) it re-queues ones that had already started; cancelled at shutdown
    # they failed with "cannot reuse already awaited coroutine", a traceback after the run's own error
    # line (CI, stop 69). With no callbacks those coroutines log to no one, so they are closed unrun.
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue = _close_unrun  # type: ignore[method-assign]
    litellm.num_retries = None  # retries are ours
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # a request cancelled by Ctrl-C can leave litellm's provider coroutine (built in a worker
    # thread) unawaited; the warning it prints then says nothing the interrupt line does not
    warnings.filterwarnings("ignore", r"coroutine '\w+\.acompletion' was never awaited", RuntimeWarning)
    _litellm_module = litellm
    return litellm


# One semaphore per (event loop, endpoint, limit): semaphores are bound to the loop they are first
# used on, and several backbone objects aimed at the same server share its capacity.
_SEMAPHORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]]
_SEMAPHORES = weakref.WeakKeyDictionary()


def _endpoint_semaphore(endpoint: str, limit: int) -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    per_loop = _SEMAPHORES.setdefault(loop, {})
    sem = per_loop.get((endpoint, limit))
    if sem is None:
        sem = per_loop[(endpoint, limit)] = asyncio.Semaphore(limit)
    return sem


def _status_code(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    if code is None:
        resp = getattr(exc, "response", None)
        code = getattr(resp, "status_code", None)
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


def _is_retryable(exc: BaseException) -> bool:
    """Transient (worth retrying) vs permanent errors."""
    if isinstance(exc, (_BadResponse, TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return True
    text = str(exc).lower()
    if "insufficient_quota" in text or "exceeded your current quota" in text:
        return False  # a 429 that waiting will not fix
    code = _status_code(exc)
    if code is not None:
        return code in _RETRY_STATUS or code >= 500
    name = type(exc).__name__.lower()
    mro = " ".join(c.__name__.lower() for c in type(exc).__mro__)
    if any(s in mro for s in ("timeout", "apiconnectionerror", "connecterror", "clienterror", "readerror")):
        return True
    return "timeout" in name or isinstance(exc, OSError)


def _opt(c: Mapping[str, object], key: str, kind: type) -> Any:
    """An optional non-negative number from the backbone config (None = unset)."""
    v = c.get(key)
    if v is None:
        return None
    try:
        out = kind(v)
    except (TypeError, ValueError):
        raise ValueError(f"backbone.{key} must be a number >= 0 or null (got {v!r})") from None
    if out < 0 or isinstance(v, bool):
        raise ValueError(f"backbone.{key} must be a number >= 0 or null (got {v!r})")
    return out


def _short(exc: BaseException, limit: int = 300) -> str:
    msg = f"{type(exc).__name__}: {exc}"
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


@dataclass
class ResponseCacheSettings:
    enabled: bool = True
    path: str = DEFAULT_CACHE_PATH  # relative to the working directory; shared by every job


@dataclass
class LiteLLMSettings:
    """The keys of a litellm backbone config (`kind: litellm`), their types and defaults: the schema
    conf/backbone/<preset>.yaml extends (`defaults: [/schema/backbone/litellm@_here_, _self_]`), so a
    preset keeps only what differs (its name and model, a server's api_base...). The constructor's
    defaults are read from here too. Spend caps and rate limits are checked by
    `LiteLLMBackbone.check_settings` (LIMITS): a number >= 0, or > 0 for rpm/tpm; null = none."""

    name: str = MISSING  # the preset's name (conf/backbone/<name>.yaml); the label of its results
    kind: str = "litellm"  # the backbone kind (tomacs.backbones.base.BACKBONES)
    require_api_base: bool = False  # true: fail at start when api_base is null (a local-server preset)
    model: str = MISSING  # litellm's model name; `openai/<served-name>` for an OpenAI-compatible server
    api_base: str | None = None  # null = the provider's default endpoint
    api_key_env: str | None = None  # the environment variable that holds the key; null = none sent
    temperature: float | None = None  # null = the provider's default (the TodyComm setting)
    max_tokens: int | None = None  # null = the provider's default
    timeout: Any = 60  # seconds per attempt (a number)
    max_concurrency: int = 16  # requests in flight to this endpoint
    max_retries: int = 6  # on 429 / 5xx / timeouts / connection errors / empty or malformed replies
    backoff_base: float = 0.5  # seconds; doubles per retry (with jitter), capped at backoff_max
    backoff_max: Any = 30  # seconds (a number)
    price: Any = None  # {input_per_mtok, output_per_mtok} USD to override litellm's price table
    params: dict[str, Any] = field(
        default_factory=dict
    )  # extra sampling params (top_p, stop, seed, ...); in the cache key
    max_usd: Any = None  # stop before the next paid call once this job has paid this much (resumable, exit 4)
    max_calls: Any = None  # the same, counted in paid calls (cache hits are free)
    sweep_max_usd: Any = None  # one cap for all jobs of a sweep, across its processes
    sweep_max_calls: Any = None
    rpm: Any = None  # requests per minute, shared by every process on this machine using this endpoint
    tpm: Any = None  # tokens per minute (prompt + max_tokens, settled with the real usage), shared too
    cache: ResponseCacheSettings = field(default_factory=ResponseCacheSettings)


class LiteLLMBackbone(BaseBackbone):
    """Backbone for any litellm model; reads only `request.messages`.

    Use `openai/<served-name>` with `api_base` for OpenAI-compatible servers (vLLM, Ollama,
    llama.cpp). `temperature=None` leaves the provider default (the TodyComm setting for
    gpt-4.1-nano). `cost_usd` of a reply is what the response cost when it was first obtained, also
    for cache hits, so methods compare on the same footing; `stats()["cost_usd"]` is what this
    process actually spent.
    """

    Settings = LiteLLMSettings

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key_env: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = LiteLLMSettings.timeout,
        max_concurrency: int = LiteLLMSettings.max_concurrency,
        max_retries: int = LiteLLMSettings.max_retries,
        backoff_base: float = LiteLLMSettings.backoff_base,
        backoff_max: float = LiteLLMSettings.backoff_max,
        cache: bool | str | Path | ResponseCache = True,
        price: Price | Mapping[str, float] | None = None,
        params: Mapping[str, object] | None = None,
        name: str | None = None,
        caps: SpendCaps | None = None,
        spend_ledger: str | Path | None = None,
        job_scope: str = "job:.",
        rpm: float | None = None,
        tpm: float | None = None,
        rate_state: str | Path | None = None,
    ) -> None:
        if not model:
            raise ValueError("LiteLLMBackbone needs a model name (e.g. 'gpt-4.1-nano' or 'openai/smollm2')")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.model = model
        self.api_base = api_base or None
        self.api_key_env = api_key_env or None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = float(timeout)
        self.max_concurrency = int(max_concurrency)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.params = dict(params or {})
        for banned in ("api_key", "api_base", "base_url", "headers", "extra_headers", "model", "messages"):
            if banned in self.params:
                raise ValueError(f"`{banned}` is not a sampling parameter; configure it explicitly")
        if isinstance(price, Mapping):
            price = Price(float(price["input_per_mtok"]), float(price["output_per_mtok"]))
        self.price = price
        self.name = name or f"litellm:{model}"
        # Concurrency is bounded per endpoint: the server URL, else the provider prefix of the model.
        self.endpoint = self.api_base or (model.split("/", 1)[0] if "/" in model else "default")

        if isinstance(cache, ResponseCache):
            self.cache: ResponseCache | None = cache
        elif cache is True:
            self.cache = ResponseCache(DEFAULT_CACHE_PATH)
        elif cache:
            self.cache = ResponseCache(cache)
        else:
            self.cache = None

        self._inflight: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._cost_unknown = False
        # Spend caps: a ledger file shared by the sweep's processes, else one in memory (this process).
        self.caps = caps or SpendCaps()
        self._spend: SpendGuard | None = None
        if self.caps.any():
            ledger = SpendLedger(spend_ledger if spend_ledger is not None else ":memory:")
            # the longest a call can hold its reservation: every attempt timing out, every backoff
            ttl = (self.timeout + _HARD_TIMEOUT_SLACK_S) * (self.max_retries + 1) + max(
                self.backoff_max, 600.0
            ) * self.max_retries
            self._spend = SpendGuard(self.caps, ledger, job_scope, ttl)
        # Rate limits: token buckets shared by every process on this machine that uses this endpoint.
        for what, v in (("rpm", rpm), ("tpm", tpm)):
            if v is not None and v <= 0:
                raise ValueError(f"backbone.{what} must be > 0 or null (got {v})")
        self.rpm = rpm
        self.tpm = tpm
        self._bucket: SharedBucket | None = None
        if rpm is not None or tpm is not None:
            path = rate_state or default_state_path(self.cache.path if self.cache is not None else None)
            self._bucket = SharedBucket(path)
        self._counters: dict[str, Any] = {
            "requests": 0,
            "calls": 0,
            "attempts": 0,
            "cache_hits": 0,
            "cache_misses": 0,
            "dedup_hits": 0,
            "retries": 0,
            "failures": 0,
            "errors": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "tokens_estimated": 0,
            "cost_usd": 0.0,
            "cost_usd_cached": 0.0,
            "rate_wait_s": 0.0,
            "rate_limited": 0,
        }

    # -- construction from config -------------------------------------------------------------
    LIMITS: ClassVar[tuple[str, ...]] = (
        "max_usd",
        "max_calls",
        "sweep_max_usd",
        "sweep_max_calls",
        "rpm",
        "tpm",
    )

    @classmethod
    def check_settings(cls, settings: Mapping[str, object]) -> None:
        """Spend caps (>= 0; 0 = cached replies only) and rate limits (> 0), null = none. Their shipped
        value is null, which the config's type check reads as "any value", so they are checked here."""
        for key in cls.LIMITS:
            v = settings.get(key)
            if v is None:
                continue
            ok = isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            if ok and key in ("max_calls", "sweep_max_calls"):
                ok = float(v).is_integer()  # type: ignore[arg-type]
            if ok and key in ("rpm", "tpm"):
                ok = v > 0  # type: ignore[operator]
            if not ok:
                want = (
                    "a whole number >= 0"
                    if "calls" in key
                    else "a number > 0"
                    if key in ("rpm", "tpm")
                    else "a number >= 0"
                )
                raise ValueError(
                    f"bad value '{v}' for 'backbone.{key}': expected {want} or null, e.g. backbone.{key}=100"
                )

    @classmethod
    def from_job(cls, spec: RunSpec, bench: JobBenchmark) -> LiteLLMBackbone:
        return cls.from_config(spec.backbone.plain())

    @classmethod
    def from_config(cls, cfg: Mapping[str, object]) -> LiteLLMBackbone:
        """Build from a `conf/backbone/*.yaml` mapping (a run spec's `backbone`, as a dict).

        `cache` may be a bool, a path, or {enabled, path}; a relative path is taken relative to the
        current directory, so callers under Hydra should pass an absolute one if jobs chdir.
        Unknown keys (`name`, `kind`, `_target_`, ...) are ignored.
        """
        c: dict[str, Any] = dict(cfg)  # a mapping of the preset's keys
        cache_cfg = c.get("cache", True)
        cache: bool | str
        if isinstance(cache_cfg, Mapping):
            enabled = cache_cfg.get("enabled", True)
            cache = str(cache_cfg.get("path") or DEFAULT_CACHE_PATH) if enabled else False
        else:
            cache = cache_cfg
        if c.get("require_api_base") and not c.get("api_base"):
            raise ValueError("this backbone preset needs `api_base` (e.g. http://127.0.0.1:8000/v1)")
        caps = SpendCaps(
            max_usd=_opt(c, "max_usd", float),
            max_calls=_opt(c, "max_calls", int),
            sweep_max_usd=_opt(c, "sweep_max_usd", float),
            sweep_max_calls=_opt(c, "sweep_max_calls", int),
        )
        ledger, job_scope = current_scope()
        kwargs = {
            k: c[k]
            for k in (
                "model",
                "api_base",
                "api_key_env",
                "temperature",
                "max_tokens",
                "timeout",
                "max_concurrency",
                "max_retries",
                "backoff_base",
                "backoff_max",
                "price",
                "params",
                "rpm",
                "tpm",
            )
            if c.get(k) is not None
        }
        return cls(cache=cache, caps=caps, spend_ledger=ledger, job_scope=job_scope, **kwargs)

    # -- protocol -----------------------------------------------------------------------------
    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        """Answer all requests concurrently; raises BackboneError if any fails for good.

        Every request is allowed to finish (and be cached) before the first error is raised, so
        responses already paid for are never thrown away.
        """
        if not requests:
            return []
        results = await asyncio.gather(*(self._one(r) for r in requests), return_exceptions=True)
        for res in results:
            if isinstance(res, SpendCapReached) and self._spend is not None:
                await self._drain()
                raise self._spend.final(res) from None
            if isinstance(res, BaseException):
                raise res
        return list(results)  # type: ignore[arg-type]

    async def _drain(self) -> None:
        """Let the calls already on the wire (from this and every other pending `generate` of this
        process) land in the cache before a cap stops the job: they are paid for either way, and
        the job unwinding would cancel them."""
        while self._inflight:
            pending = [asyncio.shield(f) for f in list(self._inflight.values())]
            await asyncio.gather(*pending, return_exceptions=True)
            await asyncio.sleep(0)  # let each call's own coroutine store its reply and unregister

    def stats(self) -> dict[str, object]:
        """Counters for results.json. `calls` = successful API completions (paid), `attempts`
        includes failed tries; `cost_usd` = spent by this process; `cost_usd_cached` = cost of
        responses served from the cache instead."""
        out: dict[str, Any] = {"backbone": self.name, "model": self.model, "api_base": self.api_base}
        out.update(self._counters)
        out["cost_usd"] = round(out["cost_usd"], 8)
        out["cost_usd_cached"] = round(out["cost_usd_cached"], 8)
        out["cost_known"] = self.price is not None or not self._cost_unknown
        out["cache"] = self.cache.stats()["path"] if self.cache is not None else None
        return out

    async def aclose(self) -> None:
        """Close the cache and the shared ledgers. litellm's shared HTTP clients are left to its own
        atexit cleanup, because other backbones in this process may still be using them."""
        if self.cache is not None:
            self.cache.close()
        if self._spend is not None:
            self._spend.ledger.close()
        if self._bucket is not None:
            self._bucket.close()

    def __repr__(self) -> str:
        return (
            f"LiteLLMBackbone(model={self.model!r}, api_base={self.api_base!r}, "
            f"api_key_env={self.api_key_env!r}, temperature={self.temperature!r}, "
            f"max_concurrency={self.max_concurrency})"
        )

    __str__ = __repr__

    # -- internals ------------------------------------------------------------------------------
    def sampling_params(self) -> dict[str, object]:
        """Parameters that shape the output distribution: sent to the model and part of the cache key."""
        p: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        p.update(self.params)
        return {k: v for k, v in p.items() if v is not None}

    def cache_key(self, request: GenerationRequest) -> str:
        """The request's response-cache and in-flight key: per agent slot, so agents with the same
        prompt each get their own sample (see `make_key`)."""
        return make_key(
            self.model, request.messages, self.sampling_params(), request.sample_index, slot=request.agent
        )

    async def _one(self, request: GenerationRequest) -> GenerationReply:
        self._counters["requests"] += 1
        key = self.cache_key(request)
        if self.cache is not None:
            rec = self.cache.get(key)
            if rec is not None:
                self._counters["cache_hits"] += 1
                self._counters["cost_usd_cached"] += rec["cost_usd"]
                return self._reply(rec, cached=True, retries=0)
            self._counters["cache_misses"] += 1
        pending = self._inflight.get(key)
        if pending is not None:  # this agent's identical request already on the wire: share its answer
            self._counters["dedup_hits"] += 1
            rec = await asyncio.shield(pending)
            return self._reply(rec, cached=True, retries=0)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            rec, retries = await self._call_with_retries(request.messages)
            if self.cache is not None:
                self.cache.put(key, rec)
            if self._cost_unknown and self.caps.needs_price():
                raise BackboneError(
                    f"a dollar cap (backbone.max_usd / sweep_max_usd) needs a price, and litellm has "
                    f"none for {self.model}: set backbone.price={{input_per_mtok: .., output_per_mtok: ..}} "
                    "or cap calls with backbone.max_calls instead"
                )
            fut.set_result(rec)
            return self._reply(rec, cached=False, retries=retries)
        except BaseException as e:
            fut.set_exception(e)
            fut.exception()  # mark retrieved: no "exception never retrieved" noise if nobody waits
            raise
        finally:
            self._inflight.pop(key, None)

    @staticmethod
    def _reply(rec: Mapping[str, Any], cached: bool, retries: int) -> GenerationReply:
        return GenerationReply(
            text=rec["text"],
            prompt_tokens=int(rec["prompt_tokens"]),
            completion_tokens=int(rec["completion_tokens"]),
            cached=cached,
            cost_usd=float(rec["cost_usd"]),
            tokens_estimated=bool(rec["tokens_estimated"]),
            retries=retries,
        )

    def _api_key(self) -> str | None:
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise BackboneError(
                    f"environment variable {self.api_key_env} is not set; {self.model} needs an API key "
                    "(tomacs reads keys only from the environment)"
                )
            return key
        if self.api_base:
            return "sk-no-key-required"  # local OpenAI-compatible servers ignore it, the SDK needs one
        return None

    def _backoff(self, attempt: int, exc: BaseException) -> float:
        """Exponential backoff with equal jitter; a Retry-After the server sends (seconds or an
        HTTP-date) is a floor, honoured even beyond backoff_max (up to RETRY_AFTER_MAX_S)."""
        d = min(self.backoff_max, self.backoff_base * (2**attempt))
        d = d / 2 + random.uniform(0, d / 2)
        ra = retry_after_of(exc)
        if ra is not None:
            d = max(d, ra)
            if self._bucket is not None and self.rpm is not None and ra > 0:
                self._bucket.pause(self._rate_key("rpm"), self.rpm / 60.0, 1.0, ra)  # every process waits
        return d

    def _rate_key(self, what: str) -> str:
        return f"{self.endpoint}|{self.model}|{what}"

    def _tokens_estimate(self, messages: list[dict[str, str]]) -> int:
        """Tokens a request will count against a tpm limit: its prompt, plus max_tokens (what
        providers reserve) or else the mean completion so far."""
        done = self._counters["calls"]
        completion = self.max_tokens or (self._counters["completion_tokens"] // done if done else 256)
        return count_chat_tokens(messages) + int(completion)

    async def _pace(self, tokens: int) -> None:
        """Wait for this request's turn under the shared rpm/tpm buckets (no-op without limits)."""
        if self._bucket is None:
            return
        wait = 0.0
        if self.rpm is not None:
            wait = self._bucket.take(self._rate_key("rpm"), self.rpm / 60.0, 1.0, 1.0)
        if self.tpm is not None:
            rate = self.tpm / 60.0
            wait = max(wait, self._bucket.take(self._rate_key("tpm"), rate, rate, float(tokens)))
        if wait > 0:
            self._counters["rate_wait_s"] += wait
            await asyncio.sleep(wait)

    async def _call_with_retries(self, messages: list[dict[str, str]]) -> tuple[dict[str, Any], int]:
        litellm = import_litellm()
        api_key = self._api_key()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "timeout": self.timeout,
            "max_retries": 0,  # the OpenAI SDK must not retry behind our back
            **self.sampling_params(),
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if api_key is not None:
            kwargs["api_key"] = api_key
        sem = _endpoint_semaphore(self.endpoint, self.max_concurrency)
        tokens = self._tokens_estimate(messages) if self.tpm is not None else 0
        reservation: str | None = None
        paid = False
        retries = 0
        try:
            for attempt in range(self.max_retries + 1):
                self._counters["attempts"] += 1
                try:
                    async with sem:
                        await self._pace(tokens)
                        if self._spend is not None and reservation is None:
                            # reserved right before the first send, inside the concurrency slot: at most
                            # max_concurrency reservations per process are waiting on replies
                            done = self._counters["calls"]
                            estimate = self._counters["cost_usd"] / done if done else None
                            reservation = self._spend.reserve(estimate)
                        async with asyncio.timeout(self.timeout + _HARD_TIMEOUT_SLACK_S):
                            resp = await litellm.acompletion(**kwargs)
                    rec = self._record(litellm, resp, messages)
                    self._counters["calls"] += 1
                    if reservation is not None and self._spend is not None:
                        self._spend.settle(reservation, rec["cost_usd"])
                        paid = True
                    if self.tpm is not None and self._bucket is not None:  # settle the estimate
                        used = rec["prompt_tokens"] + rec["completion_tokens"]
                        rate = self.tpm / 60.0
                        self._bucket.adjust(self._rate_key("tpm"), rate, rate, used - tokens)
                    return rec, retries
                except (asyncio.CancelledError, SpendCapReached):
                    raise
                except Exception as e:  # noqa: BLE001 - classified below
                    self._counters["failures"] += 1
                    if _status_code(e) == 429:
                        self._counters["rate_limited"] += 1
                    if not _is_retryable(e) or attempt >= self.max_retries:
                        self._counters["errors"] += 1
                        what = (
                            f"gave up after {attempt + 1} attempts" if _is_retryable(e) else "permanent error"
                        )
                        raise BackboneError(
                            f"{self.name} at {self.api_base or 'provider default endpoint'}: {what}; "
                            f"last error: {_short(e)}. Responses obtained so far are kept in the cache."
                        ) from None
                    delay = self._backoff(attempt, e)
                    retries += 1
                    self._counters["retries"] += 1
                    log.debug("%s: retry %d in %.2fs after %s", self.name, retries, delay, _short(e, 120))
                    await asyncio.sleep(delay)
        finally:
            if reservation is not None and not paid and self._spend is not None:
                self._spend.release(reservation)  # failed for good or cancelled: nothing was paid
        raise AssertionError("unreachable")

    def _record(self, litellm: Any, resp: Any, messages: list[dict[str, str]]) -> dict[str, Any]:
        """Turn a litellm response into a cache record; raises _BadResponse for unusable replies."""
        try:
            choice = resp.choices[0]
            text = choice.message.content
        except (AttributeError, IndexError, TypeError) as e:
            raise _BadResponse(f"response without choices/message: {e}") from None
        if not isinstance(text, str) or not text.strip():
            raise _BadResponse("empty message content")
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        estimated = False
        if pt <= 0:  # servers that report no usage (litellm then fills zeros)
            pt = count_chat_tokens(messages)
            estimated = True
        if ct <= 0:
            ct = count_tokens(text)
            estimated = True
        cost = self._cost(litellm, resp, pt, ct, estimated)
        self._counters["prompt_tokens"] += pt
        self._counters["completion_tokens"] += ct
        self._counters["tokens_estimated"] += int(estimated)
        self._counters["cost_usd"] += cost
        return {
            "model": self.model,
            "text": text,
            "prompt_tokens": pt,
            "completion_tokens": ct,
            "cost_usd": cost,
            "tokens_estimated": estimated,
        }

    def _cost(self, litellm: Any, resp: Any, pt: int, ct: int, estimated: bool) -> float:
        if self.price is not None:
            return self.price.cost(pt, ct)
        if self._cost_unknown:
            return 0.0
        if not estimated:
            hidden = getattr(resp, "_hidden_params", None) or {}
            c = hidden.get("response_cost")
            if c is not None:
                return float(c)
        try:
            if estimated:
                p, c = litellm.cost_per_token(model=self.model, prompt_tokens=pt, completion_tokens=ct)
                return float(p + c)
            return float(litellm.completion_cost(completion_response=resp, model=self.model))
        except Exception:  # noqa: BLE001 - unknown model: no price, say so once
            self._cost_unknown = True
            log.info("%s: no price known for %s; cost reported as 0 (set `price`)", self.name, self.model)
            return 0.0
