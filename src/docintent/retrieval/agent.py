"""A budgeted search agent over a page index, with the VisDocAgentBench tool set and output contract.

Tools (one per step): ``search(query, method, top_k <= 50)``, ``inspect_pages(handles <= 10)``,
``crop_pages([{handle, region, purpose}])``, ``get_page_text(handle)`` and ``submit(ranking)``, where a ranking
is exactly 10 distinct handles, each with evidence handles and a rationale. After ``budget`` steps (12) without
a valid submission the planner gets one forced, ranking-only finalisation (no tools).

Planners decide the steps:

- :class:`~docintent.retrieval.planners.OfflinePlanner`: query reformulation from inspected text
  (pseudo-relevance feedback and bridge terms), no model;
- :class:`~docintent.retrieval.planners.OpenAIPlanner`: any OpenAI-compatible chat model, one JSON action a step;
- :class:`~docintent.retrieval.planners.ScriptedPlanner`: a fixed list of actions, for tests.

Two ablations: ``iterative=False`` (one search for 30 candidates, judged in batches of 10, no reformulation)
and ``inspection=False`` (``inspect_pages``, ``crop_pages`` and ``get_page_text`` are refused).

>>> from docintent.retrieval import PageIndex
>>> from docintent.retrieval.planners import OfflinePlanner
>>> agent = SearchAgent(PageIndex.open("manuals.idx"), OfflinePlanner())       # doctest: +SKIP
>>> [p.handle for p in agent.run("which page lists the font size commands?").ranking][:3]  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from ..brains.base import Usage
from ..errors import DocIntentError, InvalidBoxError
from ..page import Box, Page
from ..trace import Action as StepAction
from ..trace import Phase, Step
from .index import PageIndex
from .retrievers import RETRIEVERS, Retriever, get_retriever

RANKING_SIZE = 10
MAX_TOP_K = 50
MAX_INSPECT = 10
DEFAULT_BUDGET = 12
TOOLS = ("search", "inspect_pages", "crop_pages", "get_page_text", "submit")


class AgentAction(StrEnum):
    """What a search step did: the agent tool it called, or failed."""

    SEARCH = "search"
    INSPECT_PAGES = "inspect_pages"
    CROP_PAGES = "crop_pages"
    GET_PAGE_TEXT = "get_page_text"
    SUBMIT = "submit"
    FAILED = "failed"


@dataclass
class SearchStep(Step):
    """One call of a retrieval agent's tools (``tool``; ``data``: its arguments and what came back)."""

    phase_kind: ClassVar[Phase | None] = Phase.SEARCH
    actions: ClassVar[type[StrEnum]] = AgentAction

    def describe(self, verbose: bool = False) -> str:
        args = self.data.get("args", {}) if isinstance(self.data, dict) else {}
        what = f"{self.tool} {args.get('query', '')!r}" if self.tool == "search" else str(self.tool)
        return f"{what} failed: {self.data.get('error')}" if self.action == AgentAction.FAILED else what


INSPECTION_TOOLS = ("inspect_pages", "crop_pages", "get_page_text")


@dataclass(frozen=True)
class RankedPage:
    """One entry of a submitted ranking: the page, the pages that support choosing it, and why."""

    handle: str
    evidence: tuple[str, ...] = ()
    rationale: str = ""


@dataclass(frozen=True)
class Action:
    """One planner step: a tool name and its arguments."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    thought: str = ""
    usage: Usage = Usage()


@dataclass
class Observation:
    """What a tool returned: JSON-ready ``data`` for every planner, page images for planners that see."""

    tool: str
    data: dict[str, Any]
    images: list[tuple[str, Page]] = field(default_factory=list)
    error: str | None = None


@dataclass
class AgentState:
    """Everything a planner may look at: the query, the budget, and the history of its own steps."""

    query: str
    budget: int
    inspection: bool
    _: KW_ONLY
    iterative: bool
    history: list[tuple[Action, Observation]] = field(default_factory=list)

    @property
    def steps_used(self) -> int:
        return len(self.history)

    @property
    def steps_left(self) -> int:
        return self.budget - len(self.history)

    def searched(self) -> list[tuple[str, list[str]]]:
        """(query, ranked handles) of every successful search so far."""
        return [
            (a.args.get("query", ""), [r["handle"] for r in o.data.get("results", [])])
            for a, o in self.history
            if a.tool == "search" and o.error is None
        ]

    def texts(self) -> dict[str, str]:
        """Page text seen so far through inspect_pages / get_page_text, by handle."""
        seen: dict[str, str] = {}
        for action, obs in self.history:
            if obs.error is None and action.tool == "inspect_pages":
                seen.update({p["handle"]: p["text"] for p in obs.data.get("pages", [])})
            elif obs.error is None and action.tool == "get_page_text":
                seen[obs.data["handle"]] = obs.data["text"]
        return seen


@dataclass
class AgentResult:
    """The agent's final ranking and how it got there."""

    query: str
    ranking: list[RankedPage]
    trace: list[Step]
    _: KW_ONLY
    steps: int
    forced: bool
    seconds: float
    usage: Usage = Usage()
    error: str | None = None

    @property
    def handles(self) -> list[str]:
        return [p.handle for p in self.ranking]


class ToolArgumentError(DocIntentError):
    """A planner called a tool with arguments that break its contract; the message goes back to the planner."""


class AgentTools:
    """The tools, bound to one index. Retrievers are built once per method and shared between queries."""

    def __init__(
        self, index: PageIndex, *, inspection: bool = True, retrievers: dict[str, Retriever] | None = None
    ) -> None:
        self.index = index
        self.inspection = inspection
        self.retrievers: dict[str, Retriever] = retrievers if retrievers is not None else {}

    def retriever(self, method: str) -> Retriever:
        if method not in self.retrievers:
            self.retrievers[method] = get_retriever(self.index, method)
        return self.retrievers[method]

    def terms(self, text: str) -> list[str]:
        """``text`` as index terms (tokenised the way the index was, so :meth:`idf` knows them)."""
        return self.index.bm25.terms(text)

    def idf(self, term: str) -> float:
        """Corpus statistic for planners: the BM25 idf of an index term (0 for unknown terms)."""
        bm = self.index.bm25
        col = bm.vocab.get(term)
        if col is None:
            return 0.0
        return float(bm.lucene_idf[col])

    def _handles(self, handles: Any, limit: int, tool: str) -> list[str]:
        if isinstance(handles, str):
            handles = [handles]
        if not isinstance(handles, list) or not handles:
            raise ToolArgumentError(f"{tool}: 'handles' must be a non-empty list of page handles")
        if len(handles) > limit:
            raise ToolArgumentError(f"{tool}: at most {limit} handles per call, got {len(handles)}")
        unknown = [h for h in handles if h not in self.index]
        if unknown:
            raise ToolArgumentError(f"{tool}: unknown handles {unknown}")
        return [str(h) for h in dict.fromkeys(handles)]

    def call(self, action: Action, *, want_images: bool) -> Observation:
        """Run one tool; contract violations come back as an observation with ``error`` set."""
        try:
            if action.tool not in TOOLS:
                raise ToolArgumentError(f"unknown tool {action.tool!r}; tools: {', '.join(TOOLS)}")
            if action.tool in INSPECTION_TOOLS and not self.inspection:
                raise ToolArgumentError(f"{action.tool} is disabled in this run (no page inspection)")
            return getattr(self, f"_{action.tool}")(action.args, want_images)
        except (ToolArgumentError, InvalidBoxError) as err:
            return Observation(action.tool, {}, error=str(err))

    def _search(self, args: dict, want_images: bool) -> Observation:
        query = str(args.get("query", "")).strip()
        if not query:
            raise ToolArgumentError("search: 'query' must be a non-empty string")
        method = str(args.get("method", "bm25"))
        if method not in RETRIEVERS:
            raise ToolArgumentError(f"search: method {method!r} is unknown; methods: {', '.join(RETRIEVERS.kinds())}")
        top_k = int(args.get("top_k", 10))
        if not 1 <= top_k <= MAX_TOP_K:
            raise ToolArgumentError(f"search: top_k must be between 1 and {MAX_TOP_K}, got {top_k}")
        hits = self.retriever(method).search(query, top_k)
        return Observation("search", {"results": [{"handle": h.handle, "score": round(h.score, 4)} for h in hits]})

    def _inspect_pages(self, args: dict, want_images: bool) -> Observation:
        handles = self._handles(args.get("handles"), MAX_INSPECT, "inspect_pages")
        if want_images:
            return Observation(
                "inspect_pages",
                {"pages": [{"handle": h} for h in handles]},
                images=[(h, self.index.image(h)) for h in handles],
            )
        return Observation("inspect_pages", {"pages": [{"handle": h, "text": self.index.text(h)} for h in handles]})

    def _crop_pages(self, args: dict, want_images: bool) -> Observation:
        crops = args.get("crops", args.get("regions"))
        if not isinstance(crops, list) or not crops:
            raise ToolArgumentError("crop_pages: 'crops' must be a non-empty list of {handle, region, purpose}")
        if len(crops) > MAX_INSPECT:
            raise ToolArgumentError(f"crop_pages: at most {MAX_INSPECT} crops per call, got {len(crops)}")
        data, images = [], []
        for crop in crops:
            handle = str(crop.get("handle")) if isinstance(crop, dict) else ""
            self._handles([handle], 1, "crop_pages")
            region = crop.get("region")
            if (
                not isinstance(region, (list, tuple))
                or len(region) != 4
                or not all(0.0 <= float(v) <= 1.0 for v in region)
            ):
                raise ToolArgumentError(
                    f"crop_pages: region of {handle} must be [x0, y0, x1, y1] within [0, 1], got {region}"
                )
            box = Box(*(float(v) for v in region))
            entry = {"handle": handle, "region": list(box.as_tuple(4)), "purpose": str(crop.get("purpose", ""))}
            if want_images:
                images.append((handle, self.index.image(handle).crop(box)))
            else:
                entry["text"] = self.index.region_text(handle, box)
            data.append(entry)
        return Observation("crop_pages", {"crops": data}, images=images)

    def _get_page_text(self, args: dict, want_images: bool) -> Observation:
        (handle,) = self._handles([args.get("handle")], 1, "get_page_text")
        return Observation("get_page_text", {"handle": handle, "text": self.index.text(handle)})

    def _submit(self, args: dict, want_images: bool) -> Observation:
        ranking = parse_ranking(args.get("ranking"))
        problem = ranking_problem([p.handle for p in ranking], self.index)
        if problem:
            raise ToolArgumentError(f"submit: {problem}")
        return Observation("submit", {"accepted": True, "ranking": [p.handle for p in ranking]})


def parse_ranking(raw: Any) -> list[RankedPage]:
    """Accept ``[{"handle", "evidence", "rationale"}, ...]`` or a plain list of handles."""
    if not isinstance(raw, list):
        raise ToolArgumentError("submit: 'ranking' must be a list of {handle, evidence, rationale}")
    out = []
    for item in raw:
        if isinstance(item, str):
            out.append(RankedPage(item))
        elif isinstance(item, dict) and isinstance(item.get("handle"), str):
            evidence = item.get("evidence") or ()
            out.append(RankedPage(item["handle"], tuple(str(e) for e in evidence), str(item.get("rationale", ""))))
        else:
            raise ToolArgumentError(
                f"submit: ranking entry {item!r} is not a handle or {{handle, evidence, rationale}}"
            )
    return out


def ranking_problem(handles: Sequence[str], index: PageIndex) -> str | None:
    """Why a ranking breaks the contract (exactly 10 distinct known handles), or None."""
    if len(handles) != RANKING_SIZE:
        return f"a ranking needs exactly {RANKING_SIZE} handles, got {len(handles)}"
    if len(set(handles)) != len(handles):
        return "the ranking repeats a handle"
    unknown = [h for h in handles if h not in index]
    if unknown:
        return f"unknown handles {unknown}"
    return None


class Planner:
    """Decides the agent's steps. ``sees_images``: inspect/crop results come as images instead of text."""

    name = "planner"
    sees_images = False

    def next_action(self, state: AgentState, tools: AgentTools) -> Action:
        """The next tool call."""
        raise NotImplementedError

    def finalize(self, state: AgentState, tools: AgentTools) -> tuple[list[RankedPage], Usage]:
        """The forced ranking once the budget is spent (no tools)."""
        raise NotImplementedError

    def judge(self, query: str, pages: list[tuple[str, Any]], tools: AgentTools) -> tuple[list[float], Usage]:
        """Relevance of each candidate (handle, text or image) to ``query``: used by the fixed-candidates ablation."""
        raise NotImplementedError


class SearchAgent:
    """Runs a planner against the tools under a step budget and returns a contract-valid ranking.

    ``iterative=False`` replaces the planner's loop by one search for ``fixed_candidates`` pages judged in
    batches of 10; ``inspection=False`` refuses the page inspection tools.
    """

    def __init__(
        self,
        index: PageIndex,
        planner: Planner,
        *,
        budget: int = DEFAULT_BUDGET,
        iterative: bool = True,
        inspection: bool = True,
        fixed_method: str = "bm25",
        fixed_candidates: int = 30,
        retrievers: dict[str, Retriever] | None = None,
    ) -> None:
        self.index = index
        self.planner = planner
        self.budget = budget
        self.iterative = iterative
        self.inspection = inspection
        self.fixed_method = fixed_method
        self.fixed_candidates = fixed_candidates
        self.tools = AgentTools(index, inspection=inspection, retrievers=retrievers)

    def run(self, query: str) -> AgentResult:
        """Search for the pages that answer ``query``; never raises for a planner's mistakes."""
        start = time.perf_counter()
        state = AgentState(query, self.budget, self.inspection, iterative=self.iterative)
        trace: list[Step] = []
        usage = Usage()
        try:
            if not self.iterative:
                ranking, usage = self._fixed(state, trace)
                return AgentResult(
                    query,
                    ranking,
                    trace,
                    steps=state.steps_used,
                    forced=False,
                    seconds=time.perf_counter() - start,
                    usage=usage,
                )
            while state.steps_left > 0:
                t0 = time.perf_counter()
                action = self.planner.next_action(state, self.tools)
                usage = usage + action.usage
                obs = self.tools.call(action, want_images=self.planner.sees_images)
                state.history.append((action, obs))
                trace.append(_step(action, obs, time.perf_counter() - t0, len(state.history)))
                if action.tool == "submit" and obs.error is None:
                    ranking = parse_ranking(action.args["ranking"])
                    return AgentResult(
                        query,
                        ranking,
                        trace,
                        steps=state.steps_used,
                        forced=False,
                        seconds=time.perf_counter() - start,
                        usage=usage,
                    )
            t0 = time.perf_counter()
            ranking, final_usage = self.planner.finalize(state, self.tools)
            usage = usage + final_usage
            ranking, padded = self._complete(ranking, state)
            trace.append(
                Step(
                    Phase.FINALIZE,
                    StepAction.FORCED,
                    reason="step budget spent",
                    seconds=time.perf_counter() - t0,
                    prompt_tokens=final_usage.prompt_tokens,
                    completion_tokens=final_usage.completion_tokens,
                    round=len(state.history) + 1,
                    data={"ranking": [p.handle for p in ranking], "padded": padded},
                )
            )
            return AgentResult(
                query,
                ranking,
                trace,
                steps=state.steps_used,
                forced=True,
                seconds=time.perf_counter() - start,
                usage=usage,
            )
        except DocIntentError as err:
            ranking, _ = self._complete([], state)
            return AgentResult(
                query,
                ranking,
                trace,
                steps=state.steps_used,
                forced=True,
                seconds=time.perf_counter() - start,
                usage=usage,
                error=str(err),
            )

    def _complete(self, ranking: list[RankedPage], state: AgentState) -> tuple[list[RankedPage], int]:
        """Drop invalid or repeated handles, then fill up to 10 from the searches in the order they ranked."""
        seen: set[str] = set()
        kept = []
        for page in ranking:
            if page.handle in self.index and page.handle not in seen:
                kept.append(page)
                seen.add(page.handle)
        kept = kept[:RANKING_SIZE]
        padded = 0

        def pool():
            for _, handles in state.searched():
                yield from handles
            yield from (h.handle for h in self.tools.retriever("bm25").search(state.query, MAX_TOP_K))
            yield from self.index.handles

        for handle in pool():
            if len(kept) >= RANKING_SIZE:
                break
            if handle not in seen:
                kept.append(RankedPage(handle, (), "filled in from search results after the budget ran out"))
                seen.add(handle)
                padded += 1
        return kept, padded

    def _fixed(self, state: AgentState, trace: list[Step]) -> tuple[list[RankedPage], Usage]:
        """Ablation without iterative search: top candidates of the query, judged in batches of 10."""
        search = Action("search", {"query": state.query, "method": self.fixed_method, "top_k": self.fixed_candidates})
        obs = self.tools.call(search, want_images=False)
        state.history.append((search, obs))
        trace.append(_step(search, obs, 0.0, 1))
        handles = [r["handle"] for r in obs.data.get("results", [])]
        usage = Usage()
        scores: dict[str, float] = {}
        for start in range(0, len(handles), MAX_INSPECT):
            batch = handles[start : start + MAX_INSPECT]
            if self.inspection:
                act = Action("inspect_pages", {"handles": batch})
                seen = self.tools.call(act, want_images=self.planner.sees_images)
                state.history.append((act, seen))
                trace.append(_step(act, seen, 0.0, len(state.history)))
                content = (
                    [(h, img) for h, img in seen.images]
                    if seen.images
                    else [(p["handle"], p["text"]) for p in seen.data["pages"]]
                )
            else:
                content = [(h, None) for h in batch]
            judged, cost = self.planner.judge(state.query, content, self.tools)
            usage = usage + cost
            scores.update({h: s for (h, _), s in zip(content, judged)})
        order = sorted(handles, key=lambda h: (-scores.get(h, 0.0), handles.index(h)))
        ranking = [RankedPage(h, (h,), f"judged relevance {scores.get(h, 0.0):.3f}") for h in order]
        ranking, _ = self._complete(ranking, state)
        return ranking, usage


def _step(action: Action, obs: Observation, seconds: float, number: int) -> Step:
    summary: dict[str, Any] = {"args": action.args}
    if obs.error:
        summary["error"] = obs.error
    elif action.tool == "search":
        summary["results"] = [r["handle"] for r in obs.data["results"]]
    elif action.tool in ("inspect_pages", "crop_pages"):
        summary["pages"] = [p["handle"] for p in obs.data.get("pages", obs.data.get("crops", []))]
    return SearchStep(
        Phase.SEARCH,
        AgentAction(action.tool) if obs.error is None else AgentAction.FAILED,
        tool=action.tool,
        reason=action.thought,
        seconds=seconds,
        prompt_tokens=action.usage.prompt_tokens,
        completion_tokens=action.usage.completion_tokens,
        round=number,
        data=summary,
    )
