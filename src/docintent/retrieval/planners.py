"""Planners for the :class:`~docintent.retrieval.agent.SearchAgent`: offline, OpenAI-compatible model, scripted.

The offline planner never sees gold labels; it works from the query, the search results and the text of the
pages it inspects, plus corpus idf statistics:

1. If the query refers to its target indirectly ("the package named in the section about X"), it is split
   at the cue into a *target* clause ("the package") and an *anchor* clause ("the section about X").
2. Search the anchor clause (the whole query when there is no cue) and inspect the top pages.
3. Direct queries: read the top 30 pages, add pseudo-relevance-feedback terms (high tf-idf terms shared by
   the top inspected pages) and search again; the final ranking fuses both searches and re-ranks the pages it
   read by :meth:`OfflinePlanner.judge` (query-term coverage plus a match in a short heading line).
4. Bridged queries: collect *bridge terms* from the inspected anchor pages, i.e. names that stand next to
   the target's type noun ("graphicx package", "package graphicx", ``\\usepackage{graphicx}``), titles
   and defined terms; search each promising one together with the target clause; rank those results first,
   each with the anchor page it came from as evidence.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ..brains.base import Usage
from ..brains.chat import ChatModel
from ..brains.endpoint import Endpoint
from ..brains.endpoint import parse_json_reply as _parse_json_reply
from ..errors import ConfigError, ModelEndpointError
from ..registry import Registry
from ..settings import get_settings
from .agent import (
    MAX_INSPECT,
    MAX_TOP_K,
    RANKING_SIZE,
    Action,
    AgentState,
    AgentTools,
    Planner,
    RankedPage,
    parse_ranking,
)
from .retrievers import reciprocal_rank_fusion
from .text import STOPWORDS, stem

#: Phrases by which a query points at its target through another page (target clause before, anchor after).
BRIDGE_CUES = (
    "named in",
    "named on",
    "mentioned in",
    "mentioned on",
    "referred to in",
    "referred to on",
    "referenced in",
    "recommended in",
    "cited in",
    "introduced in",
    "that is the subject of",
    "which appears in",
    "that appears in",
    "that comes up in",
)
#: Nouns that name the kind of thing a bridge points to; a bridge term stands next to one of them.
TYPE_NOUNS = (
    "package",
    "class",
    "command",
    "environment",
    "option",
    "counter",
    "file",
    "program",
    "bundle",
    "macro",
    "font",
    "function",
)
_GENERIC = frozenset(
    "the this that a an new each any following same other these those its his their our your one two three "
    "latex tex pdf file files package packages class classes command commands option options standard base "
    "document documents user users used use using kernel first second some all many example examples".split()
)
_NAME = r"([A-Za-z][A-Za-z0-9-]{1,30})"


def split_bridge(query: str) -> tuple[str, str] | None:
    """(target clause, anchor clause) when the query uses a bridge cue, else None.

    >>> split_bridge("the first page of the package named in the section about float placement")
    ('the first page of the package', 'the section about float placement')
    """
    low = query.lower()
    best = None
    if not any(cue in low for cue in BRIDGE_CUES):
        return _split_anaphoric(query)
    for cue in BRIDGE_CUES:
        at = low.find(cue)
        if at > 0 and (best is None or at < best[0]):
            best = (at, cue)
    if best is None:
        return None
    at, cue = best
    target, anchor = query[:at].strip(" ,;:?"), query[at + len(cue) :].strip(" ,;:?")
    return (target, anchor) if anchor else None


_TARGET_ASK = re.compile(
    r"\b(?:first|title|opening) page\b|\b(?:documentation|manual)\s+(?:starts?|begins?|opens?)\b"
    r"|\bopens the (?:documentation|manual)\b",
    re.IGNORECASE,
)
_ANAPHOR = re.compile(
    r"\b(?:that|this|which|its)\b(?:\s+[\w-]+){0,2}?\s+(?:package|class)|\bits (?:documentation|manual)\b",
    re.IGNORECASE,
)


def _split_anaphoric(query: str) -> tuple[str, str] | None:
    """A question that asks where the documentation of a thing it only describes begins.

    "The array manual points to a better package. Where does that package's documentation begin?" has no
    bridge cue, but asks for a first page ("documentation begins", "first page", "title page") of a thing
    it names only by reference ("that package", "which class", "its documentation"). The sentence that asks
    is the target clause; the rest (or the whole question, when it is one sentence) is the anchor.

    >>> _split_anaphoric("The guide points to a better package. Where does that package's documentation begin?")
    ("Where does that package's documentation begin", 'The guide points to a better package.')
    """
    if not _TARGET_ASK.search(query) or not _ANAPHOR.search(query):
        return None
    sentences = [x for x in re.split(r"(?<=[.?!])\s+", query.strip()) if x]
    asking = [i for i, x in enumerate(sentences) if _TARGET_ASK.search(x)]
    i = asking[-1]
    anchor = " ".join(x for j, x in enumerate(sentences) if j != i) or query
    return sentences[i].strip(" ,;:?"), anchor


def bridge_terms(text: str, type_nouns: Iterable[str]) -> Counter:
    """Names standing next to one of ``type_nouns`` in ``text`` (lower-cased), with their counts."""
    found: Counter = Counter()
    for noun in type_nouns:
        for pattern in (
            rf"\b{_NAME}\s+{noun}s?\b",
            rf"\b{noun}s?\s+{_NAME}\b",
            rf"\b{_NAME}\.sty\b" if noun == "package" else None,
        ):
            if pattern:
                found.update(m.lower() for m in re.findall(pattern, text))
        if noun == "package":
            for group in re.findall(r"\\(?:usepackage|RequirePackage)(?:\[[^\]]*\])?\{([^}]+)\}", text):
                found.update(name.strip().lower() for name in group.split(",") if name.strip())
        if noun == "environment":
            found.update(m.lower() for m in re.findall(r"\\begin\{([A-Za-z*]+)\}", text))
    return Counter({t: c for t, c in found.items() if t not in _GENERIC and t not in STOPWORDS and not t.isdigit()})


class OfflinePlanner(Planner):
    """Query reformulation from inspected text, with no model (see the module docstring).

    ``method``: the retrieval method of its searches; ``prf_terms``: expansion terms per feedback round;
    ``bridges``: how many bridge terms it follows.
    """

    name = "offline"

    def __init__(
        self,
        method: str = "bm25",
        *,
        prf_terms: int = 5,
        prf_pages: int = 3,
        bridges: int = 4,
        bridge_inspections: int = 3,
        inspect_depth: int = 30,
        first_weight: int = 2,
        rank_weight: float = 0.2,
        keep_first: int = 1,
    ) -> None:
        self.method = method
        self.prf_terms = prf_terms
        self.prf_pages = prf_pages
        self.bridges = bridges
        self.bridge_inspections = bridge_inspections
        self.inspect_depth = inspect_depth
        self.first_weight = first_weight
        self.rank_weight = rank_weight
        self.keep_first = keep_first

    # --- the plan ------------------------------------------------------------------------------------

    def _plan(self, state: AgentState, tools: AgentTools) -> list[Action]:
        """The remaining actions; every step is a deterministic function of the history, so it is recomputed."""
        split = split_bridge(state.query)
        anchor = split[1] if split else state.query
        searches = state.searched()
        texts = state.texts()
        if not searches:
            return [
                Action(
                    "search",
                    {"query": anchor, "method": self.method, "top_k": MAX_TOP_K},
                    "search the anchor" if split else "first search",
                )
            ]
        first = searches[0][1]
        done_queries = {q for q, _ in searches}
        plan: list[Action] = []
        if state.inspection:
            for start in range(0, self.inspect_depth if not split else MAX_INSPECT, MAX_INSPECT):
                batch = [h for h in first[start : start + MAX_INSPECT] if h not in texts]
                if batch:
                    plan.append(Action("inspect_pages", {"handles": batch}, "read the best pages of the first search"))
            if plan:
                return plan[:1]
        if split:
            noun = self._target_noun(split[0])
            for term, _support, _weight in self._bridge_candidates(state, tools, [noun])[: self.bridges]:
                q = f"{term} {noun}"
                if q not in done_queries:
                    plan.append(
                        Action(
                            "search", {"query": q, "method": self.method, "top_k": 30}, f"follow bridge term {term!r}"
                        )
                    )
            if not state.inspection and split[0] not in done_queries:
                plan.append(
                    Action(
                        "search",
                        {"query": split[0], "method": self.method, "top_k": MAX_TOP_K},
                        "search the target clause",
                    )
                )
            if plan:
                return plan
            if state.inspection and state.steps_left > 1:
                # Read the bridge results rank by rank across the searches: the page that opens with the name wins.
                noun = self._target_noun(split[0])
                weights = {f"{t} {noun}": w for t, _, w in self._bridge_candidates(state, tools, [noun])}
                priority: dict[str, float] = defaultdict(float)
                for q, hs in searches[1:]:
                    for rank, h in enumerate(hs):
                        priority[h] = max(priority[h], weights.get(q, 0.0) / (rank + 1))
                interleaved = sorted(priority, key=lambda h: -priority[h])
                inspected_bridge = sum(1 for a, _ in state.history[2:] if a.tool == "inspect_pages")
                tops = list(dict.fromkeys(h for h in interleaved if h not in texts))[:MAX_INSPECT]
                if tops and inspected_bridge < self.bridge_inspections:
                    return [Action("inspect_pages", {"handles": tops}, "read the bridge results")]
            return []
        if state.inspection and self.prf_terms:
            expansion = self._feedback_terms(state, tools)
            if expansion:
                q = f"{state.query} {' '.join(expansion)}"
                if q not in done_queries:
                    return [
                        Action(
                            "search",
                            {"query": q, "method": self.method, "top_k": MAX_TOP_K},
                            "pseudo-relevance feedback",
                        )
                    ]
        return []

    @staticmethod
    def _target_noun(target_clause: str) -> str:
        low = target_clause.lower()
        found = [(low.rfind(n), n) for n in TYPE_NOUNS if re.search(rf"\b{n}s?\b", low)]
        return max(found)[1] if found else "package"

    @staticmethod
    def heading_match(text: str, terms: set[str], tools: AgentTools, *, lines: int = 40) -> float:
        """Best idf-weighted share of ``terms`` found in one short line (a heading) among the first ``lines``."""
        total = sum(tools.idf(t) for t in terms)
        if not total:
            return 0.0
        best = 0.0
        for line in text.split("\n")[:lines]:
            words = line.split()
            if not 0 < len(words) <= 10:
                continue
            have = terms & set(tools.terms(line))
            best = max(best, sum(tools.idf(t) for t in have) / total)
        return best

    def next_action(self, state: AgentState, tools: AgentTools) -> Action:
        plan = self._plan(state, tools)
        if plan and state.steps_left > 1:
            return plan[0]
        ranking, _ = self.finalize(state, tools)
        return Action("submit", {"ranking": [p.__dict__ | {"evidence": list(p.evidence)} for p in ranking]}, "submit")

    # --- reasoning over inspected text ----------------------------------------------------------------

    def _feedback_terms(self, state: AgentState, tools: AgentTools) -> list[str]:
        """High tf-idf terms shared by the top inspected pages of the first search, not already in the query."""
        texts = state.texts()
        first = state.searched()[0][1]
        top = [texts[h] for h in first[: self.prf_pages] if h in texts]
        if not top:
            return []
        query_terms = set(tools.terms(state.query))
        weight: dict[str, float] = defaultdict(float)
        present: Counter = Counter()
        for text in top:
            counts = Counter(tools.terms(text))
            total = sum(counts.values()) or 1
            for term, tf in counts.items():
                weight[term] += (tf / total) * tools.idf(term)
                present[term] += 1
        candidates = [
            t
            for t in weight
            if t not in query_terms and present[t] >= min(2, len(top)) and len(t) > 2 and not t.isdigit()
        ]
        candidates.sort(key=lambda t: -weight[t])
        return candidates[: self.prf_terms]

    def _anchor_order(self, state: AgentState, tools: AgentTools) -> list[str]:
        """Anchor-search pages, those whose heading matches the anchor clause first (inspected pages only)."""
        texts = state.texts()
        first = state.searched()[0][1]
        split = split_bridge(state.query)
        terms = set(tools.terms(split[1] if split else state.query))
        inspected = [h for h in first if h in texts]
        scored = {h: self.heading_match(texts[h], terms, tools) for h in inspected}
        return sorted(inspected, key=lambda h: (-(scored[h] + 1.0 / (first.index(h) + 2)), first.index(h)))

    def _bridge_candidates(
        self, state: AgentState, tools: AgentTools, nouns: Sequence[str]
    ) -> list[tuple[str, str, float]]:
        """(bridge term, the anchor page it was found on, weight), best first.

        A term scores by the rank of the anchor pages it appears on (1/rank, after the heading re-ranking),
        times its idf, so a rare name on the best anchor page leads. Terms of the query itself are not bridges.
        """
        texts = state.texts()
        query_words = {w.lower() for w in re.findall(r"[A-Za-z0-9-]+", state.query)}
        query_stems = set(tools.terms(state.query))
        scores: dict[str, float] = defaultdict(float)
        support: dict[str, str] = {}
        for rank, handle in enumerate(self._anchor_order(state, tools), start=1):
            for term, count in bridge_terms(texts[handle], nouns).items():
                if term in query_words or term in query_stems or stem(term) in query_stems:
                    continue
                idf = max(tools.idf(stem(term)), tools.idf(term), 0.1)
                scores[term] += idf * (1.0 + math.log(count)) / rank
                support.setdefault(term, handle)
        ranked = sorted(scores, key=lambda t: -scores[t])
        return [(t, support[t], scores[t]) for t in ranked]

    def finalize(self, state: AgentState, tools: AgentTools) -> tuple[list[RankedPage], Usage]:
        searches = state.searched()
        if not searches:
            return [], Usage()
        texts = state.texts()
        split = split_bridge(state.query)
        first = searches[0][1]
        pages: list[RankedPage] = []
        if split and len(searches) > 1:
            noun = self._target_noun(split[0])
            candidates = {f"{t} {noun}": (t, sup, w) for t, sup, w in self._bridge_candidates(state, tools, [noun])}
            score: dict[str, float] = defaultdict(float)
            why: dict[str, tuple[str, str]] = {}
            introduced: set[str] = set()
            for q, hs in searches[1:]:
                if q not in candidates:
                    continue
                term, sup, weight = candidates[q]
                for rank, h in enumerate(hs, start=1):
                    bonus = 1.0
                    if h in texts and term in " ".join(texts[h].split("\n")[:3]).lower():
                        bonus = 3.0  # the name in the first lines: the page that introduces it
                        introduced.add(h)
                    gain = weight * bonus / (rank + 1)
                    if gain > score[h]:
                        why[h] = (term, sup)
                    score[h] = max(score[h], gain)
            bridged = [
                RankedPage(h, (why[h][1], h), f"introduces {why[h][0]!r}, named on {why[h][1]}")
                for h in sorted(score, key=lambda h: -score[h])
            ]
            anchor = [RankedPage(h, (h,), "anchor search") for h in first]
            # Reorder only on evidence read from a page: a bridge result that opens with the bridge name.
            evidence = any(h in introduced for h in score)
            pages = bridged + anchor if evidence else anchor[:1] + bridged + anchor[1:]
        else:
            runs = [hs for _, hs in searches]
            fused = reciprocal_rank_fusion([runs[0]] * self.first_weight + runs[1:])
            best = fused[0].score if fused else 1.0
            read = [h.handle for h in fused if h.handle in texts]
            judged = dict(zip(read, self.judge(state.query, [(h, texts[h]) for h in read], tools)[0]))
            combined = {h.handle: self.rank_weight * h.score / best + judged.get(h.handle, 0.0) for h in fused}
            order = sorted(combined, key=lambda h: -combined[h])
            # The first search's best pages stay on top: re-ranking by read text and feedback lost R@1 to
            # the first search on questions written from page content; below them it may only add recall.
            kept = first[: self.keep_first]
            pages = [RankedPage(h, (h,), "first search") for h in kept]
            pages += [RankedPage(h, (h,), "search rank and heading match") for h in order if h not in kept]
        unique: dict[str, RankedPage] = {}
        for page in pages:
            unique.setdefault(page.handle, page)
        # Searches return only pages that match at all; a small corpus may need filling up to ten.
        for handle in tools.index.handles:
            if len(unique) >= RANKING_SIZE:
                break
            unique.setdefault(handle, RankedPage(handle, (), "no search matched more pages"))
        return list(unique.values())[:RANKING_SIZE], Usage()

    def judge(self, query: str, pages: list[tuple[str, Any]], tools: AgentTools) -> tuple[list[float], Usage]:
        """Heading match plus BM25-style saturated coverage of the query terms (0 for pages it cannot read).

        coverage = sum over query terms t of idf(t) * tf / (tf + 1.2), over the sum of idf(t); the heading match
        (see :meth:`heading_match`) counts once more, since a manual page about X usually opens with X.
        """
        terms = set(tools.terms(query))
        total = sum(tools.idf(t) for t in terms) or 1.0
        out = []
        for _handle, text in pages:
            if not isinstance(text, str):
                out.append(0.0)
                continue
            counts = Counter(tools.terms(text))
            coverage = sum(tools.idf(t) * counts[t] / (counts[t] + 1.2) for t in terms if counts[t]) / total
            out.append(coverage + self.heading_match(text, terms, tools))
        return out, Usage()


class ScriptedPlanner(Planner):
    """Plays a fixed list of actions, then the given final ranking: a test double for agents and budgets.

    >>> planner = ScriptedPlanner([Action("search", {"query": "fonts"})], final=["page_000001"])
    """

    name = "scripted"

    def __init__(
        self, actions: Sequence[Action], *, final: Sequence[str] = (), judgements: Sequence[float] = ()
    ) -> None:
        self.actions = list(actions)
        self.final = list(final)
        self.judgements = list(judgements)
        self.finalize_calls = 0

    def next_action(self, state: AgentState, tools: AgentTools) -> Action:
        step = state.steps_used
        return self.actions[step] if step < len(self.actions) else self.actions[-1]

    def finalize(self, state: AgentState, tools: AgentTools) -> tuple[list[RankedPage], Usage]:
        self.finalize_calls += 1
        return [RankedPage(h) for h in self.final], Usage()

    def judge(self, query: str, pages: list[tuple[str, Any]], tools: AgentTools) -> tuple[list[float], Usage]:
        return [self.judgements[i] if i < len(self.judgements) else 0.0 for i in range(len(pages))], Usage()


SYSTEM_PROMPT = """You find the pages of a closed document collection that answer a question.
Pages are known only by opaque handles such as page_000123. Each turn, reply with exactly one JSON object
and nothing else: {"tool": NAME, "args": {...}, "thought": "one sentence"}. Tools:
- search: {"query": str, "method": "bm25"|"dense"|"fusion", "top_k": 1..50} -> ranked handles
- inspect_pages: {"handles": [up to 10 handles]} -> the page images
- crop_pages: {"crops": [{"handle": h, "region": [x0, y0, x1, y1] in 0..1, "purpose": str}]} -> zoomed crops
- get_page_text: {"handle": h} -> the page's text
- submit: {"ranking": [{"handle": h, "evidence": [handles], "rationale": str}, ...]} with EXACTLY 10 distinct handles,
  the best first; evidence lists the pages that show why (for an indirect question, the page that names the target).
Some questions identify their answer page only through another page (e.g. "the page documenting the package
named in the section about X"): find that other page first, read the name on it, then search for the name.
You have {budget} steps; after that you must give the ranking without tools."""


def parse_json_reply(content: str) -> dict[str, Any]:
    """The first JSON object in a model reply (code fences and surrounding prose are tolerated).

    >>> parse_json_reply('Sure: ```json\\n{"tool": "search", "args": {"query": "x"}}\\n```')["tool"]
    'search'
    """
    return _parse_json_reply(content)


class OpenAIPlanner(Planner):
    """A chat model behind any OpenAI-compatible endpoint, one JSON action per step.

    ``base_url`` / ``api_key`` / ``model`` default to the DOCINTENT_* settings and OPENAI_* variables; a local
    server needs no key. ``sees_images``: send inspected pages as images (a vision model), else as text.
    Requests go through :class:`~docintent.brains.endpoint.Endpoint`: HTTP 429 / 5xx, replies that are not
    completions and one timeout are retried (``max_retries``) honouring ``Retry-After``, and a refused request
    is an error naming its fix. ``chat_model``: plan with a model behind another API instead (any
    :class:`~docintent.brains.chat.ChatModel`, e.g. wrapped in :class:`~docintent.brains.retrying.Retrying`);
    the endpoint's options are then refused, not ignored.
    """

    name = "openai"

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        sees_images: bool = True,
        max_retries: int = 3,
        timeout: float = 120.0,
        temperature: float = 0.0,
        chat_model: ChatModel | None = None,
    ) -> None:
        self.endpoint: ChatModel
        if chat_model is not None:
            given = [
                name
                for name, value, default in (
                    ("model", model, None),
                    ("base_url", base_url, None),
                    ("api_key", api_key, None),
                    ("max_retries", max_retries, 3),
                    ("timeout", timeout, 120.0),
                    ("temperature", temperature, 0.0),
                )
                if value != default
            ]
            if given:
                raise ConfigError(
                    f"planner 'openai': {', '.join(given)} configure the OpenAI endpoint, which a ready "
                    "chat_model replaces: set them on the chat model"
                )
            self.model: str | None = chat_model.configured_model
            self.endpoint = chat_model
        else:
            settings = get_settings()
            self.model = model or settings.model
            if not self.model:
                raise ModelEndpointError("no model name: pass model= or set DOCINTENT_MODEL")
            url = base_url or settings.resolved_base_url()
            if not url:
                raise ModelEndpointError("no endpoint: pass base_url= or set DOCINTENT_BASE_URL or OPENAI_BASE_URL")
            self.endpoint = Endpoint(
                url,
                self.model,
                api_key or settings.resolved_api_key(),
                timeout=timeout,
                max_retries=max_retries,
                temperature=temperature,
            )
        self.sees_images = sees_images
        self.temperature = temperature
        self._messages: list[dict[str, Any]] = []
        self._query: str | None = None
        self._seen = 0

    def _sync(self, state: AgentState) -> None:
        """Bring the conversation up to date with the agent's history (a new query starts a new one)."""
        if self._query != state.query or self._seen > len(state.history):
            self._messages = [
                {"role": "system", "content": SYSTEM_PROMPT.replace("{budget}", str(state.budget))},
                {"role": "user", "content": f"Question: {state.query}"},
            ]
            self._query, self._seen = state.query, 0
        for action, obs in state.history[self._seen :]:
            self._messages.append(
                {"role": "assistant", "content": json.dumps({"tool": action.tool, "args": action.args})}
            )
            text = json.dumps({"error": obs.error} if obs.error else obs.data)
            left = state.budget - state.history.index((action, obs)) - 1
            content: Any = f"{obs.tool} result ({left} steps left): {text}"
            if obs.images:
                content = [{"type": "text", "text": content}]
                for handle, page in obs.images:
                    content += [
                        {"type": "text", "text": f"image of {handle}:"},
                        self.endpoint.image_part(page, 1024, fmt="jpeg", quality=80),
                    ]
            self._messages.append({"role": "user", "content": content})
        self._seen = len(state.history)

    def _chat(self, messages: list[dict[str, Any]]) -> tuple[str, Usage]:
        reply = self.endpoint.chat(messages)
        return reply.text, reply.usage

    def next_action(self, state: AgentState, tools: AgentTools) -> Action:
        self._sync(state)
        content, usage = self._chat(self._messages)
        try:
            obj = parse_json_reply(content)
            return Action(str(obj.get("tool", "")), dict(obj.get("args") or {}), str(obj.get("thought", "")), usage)
        except (ValueError, TypeError) as err:
            # The tools reject the unknown tool, so the model sees its mistake at the cost of one step.
            return Action("invalid_reply", {"reply": content[:500], "problem": str(err)}, "", usage)

    def finalize(self, state: AgentState, tools: AgentTools) -> tuple[list[RankedPage], Usage]:
        self._sync(state)
        messages = self._messages + [
            {
                "role": "user",
                "content": "The step budget is spent. Reply now with only "
                '{"ranking": [{"handle": h, "evidence": [handles], "rationale": str}, ...]} holding exactly 10 '
                "distinct handles you have seen, best first. No tools.",
            }
        ]
        content, usage = self._chat(messages)
        try:
            return parse_ranking(parse_json_reply(content).get("ranking")), usage
        except Exception:  # noqa: BLE001 - an unusable final reply becomes an empty ranking the agent fills
            return [], usage

    def judge(self, query: str, pages: list[tuple[str, Any]], tools: AgentTools) -> tuple[list[float], Usage]:
        parts: list[dict[str, Any]] = [
            {
                "type": "text",
                "text": f"Question: {query}\nRate how likely each page below answers the question, from 0 to 1. "
                'Reply with only {"scores": {handle: number, ...}}.',
            }
        ]
        for handle, content in pages:
            if isinstance(content, str):
                parts.append({"type": "text", "text": f"{handle}:\n{content[:3000]}"})
            elif content is not None:
                parts += [
                    {"type": "text", "text": f"{handle}:"},
                    self.endpoint.image_part(content, 1024, fmt="jpeg", quality=80),
                ]
            else:
                parts.append({"type": "text", "text": f"{handle} (not shown)"})
        reply, usage = self._chat([{"role": "user", "content": parts}])
        try:
            scores = parse_json_reply(reply).get("scores", {})
            return [float(scores.get(h, 0.0)) for h, _ in pages], usage
        except (ValueError, TypeError, AttributeError):
            return [0.0] * len(pages), usage


#: Search-agent planners; plug-ins join through the ``docintent.planners`` entry points.
PLANNERS: Registry[Planner] = Registry("planner", group="docintent.planners")
PLANNERS.register("offline", OfflinePlanner, description="query reformulation from inspected text, no model")
PLANNERS.register("openai", OpenAIPlanner, description="an OpenAI-compatible model plans the searches")
PLANNERS.register("scripted", ScriptedPlanner, description="replays scripted actions (a test double)")
