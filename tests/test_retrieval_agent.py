"""The search agent: step budget, forced finalisation, tool contracts, ablations, bridges, an OpenAI endpoint."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from docintent.retrieval import PageIndex, build_index, get_retriever
from docintent.retrieval.agent import Action, SearchAgent
from docintent.retrieval.planners import OfflinePlanner, OpenAIPlanner, ScriptedPlanner, split_bridge
from retrieval_helpers import FILLER, make_pdf

ANCHOR = "Float placement tips\nTo keep figures near their text,\nload the zzplace package with the here option."
TARGET = "The zzplace package\nVersion 1.0 by A. Author\nReleased under the LPPL."
BRIDGE_QUERY = "Which page opens the documentation of the package named in the section about float placement tips?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("agent")
    make_pdf(root / "guide.pdf", FILLER + [ANCHOR])
    make_pdf(root / "zzplace.pdf", [TARGET, "Implementation notes\nThe code uses two passes."])
    build_index([root / "guide.pdf", root / "zzplace.pdf"], root / "idx")
    index = PageIndex.open(root / "idx")
    by_text = {index.text(h).split("\n")[0]: h for h in index.handles}
    return index, by_text


def test_budget_then_one_forced_finalisation(corpus):
    index, _ = corpus
    planner = ScriptedPlanner([Action("search", {"query": "tables", "top_k": 5})], final=[])
    result = SearchAgent(index, planner).run("tables")
    assert result.steps == 12 and result.forced and planner.finalize_calls == 1
    assert [s.tool for s in result.trace] == ["search"] * 12 + [None]
    assert result.trace[-1].action == "forced" and result.trace[-1].data["padded"] == 10
    assert len(set(result.handles)) == 10 and all(h in index for h in result.handles)
    short = SearchAgent(index, ScriptedPlanner([Action("search", {"query": "x"})]), budget=3).run("x")
    assert short.steps == 3 and short.forced


def test_invalid_submission_costs_a_step_and_the_planner_sees_why(corpus):
    index, _ = corpus
    ten = index.handles[:10]
    planner = ScriptedPlanner(
        [
            Action("submit", {"ranking": ten[:9]}),
            Action("submit", {"ranking": [{"handle": h, "evidence": [h], "rationale": "r"} for h in ten]}),
        ]
    )
    result = SearchAgent(index, planner).run("anything")
    assert (result.steps, result.forced, result.handles) == (2, False, ten)
    assert result.trace[0].action == "failed" and "exactly 10 handles, got 9" in result.trace[0].data["error"]
    assert result.ranking[0].evidence == (ten[0],)


def test_tool_contracts_and_disabled_inspection(corpus):
    index, _ = corpus
    actions = [
        Action("search", {"query": "tables", "top_k": 51}),
        Action("inspect_pages", {"handles": index.handles[:11]}),
        Action("crop_pages", {"crops": [{"handle": index.handles[0], "region": [0, 0, 1.5, 1], "purpose": "title"}]}),
        Action("crop_pages", {"crops": [{"handle": index.handles[0], "region": [0, 0, 1, 0.2], "purpose": "title"}]}),
    ]
    result = SearchAgent(index, ScriptedPlanner(actions), budget=4).run("q")
    errors = [s.data.get("error", "") for s in result.trace[:4]]
    assert "top_k must be between 1 and 50, got 51" in errors[0]
    assert "at most 10 handles per call, got 11" in errors[1]
    assert "within [0, 1]" in errors[2]
    assert errors[3] == "" and result.trace[3].action == "crop_pages"
    blind = SearchAgent(
        index, ScriptedPlanner([Action("get_page_text", {"handle": index.handles[0]})]), budget=1, inspection=False
    )
    assert "disabled in this run (no page inspection)" in blind.run("q").trace[0].data["error"]


def test_crop_text_comes_from_the_region(corpus):
    index, by_text = corpus
    handle = by_text["Float placement tips"]
    planner = ScriptedPlanner(
        [Action("crop_pages", {"crops": [{"handle": handle, "region": [0, 0, 1, 0.1], "purpose": "heading"}]})]
    )
    agent = SearchAgent(index, planner, budget=1)
    obs = agent.tools.call(planner.actions[0], want_images=False)
    assert obs.data["crops"][0]["text"].strip() == "Float placement tips"
    image_obs = agent.tools.call(planner.actions[0], want_images=True)
    assert image_obs.images[0][1].height == 72  # a tenth of a 720-pixel page


def test_offline_planner_follows_a_bridge_that_bm25_misses(corpus):
    index, by_text = corpus
    assert split_bridge(BRIDGE_QUERY)[1] == "the section about float placement tips"
    target, anchor = by_text["The zzplace package"], by_text["Float placement tips"]
    bm25 = [h.handle for h in get_retriever(index).search(BRIDGE_QUERY, 10)]
    assert bm25[0] == anchor and bm25.index(target) > 0
    result = SearchAgent(index, OfflinePlanner()).run(BRIDGE_QUERY)
    assert not result.forced and result.handles[0] == target
    assert result.ranking[0].evidence == (anchor, target)
    assert "zzplace" in result.ranking[0].rationale
    assert [s.tool for s in result.trace][:2] == ["search", "inspect_pages"]


def test_offline_planner_direct_query_and_ablations(corpus):
    index, by_text = corpus
    target = by_text["Hyphenation patterns"]
    for agent in (
        SearchAgent(index, OfflinePlanner()),
        SearchAgent(index, OfflinePlanner(), inspection=False),
        SearchAgent(index, OfflinePlanner(), iterative=False),
    ):
        result = agent.run("where are the hyphenation patterns of each language?")
        assert result.handles[0] == target and len(set(result.handles)) == 10


def test_fixed_candidates_are_ordered_by_the_planners_judgement(corpus):
    index, _ = corpus
    candidates = [h.handle for h in get_retriever(index).search("text entries patterns titles", 30)]
    planner = ScriptedPlanner([], judgements=[0.0, 0.2, 0.9])
    result = SearchAgent(index, planner, iterative=False).run("text entries patterns titles")
    assert len(candidates) >= 3
    assert result.handles[0] == candidates[2] and result.handles[1] == candidates[1]
    assert [s.tool for s in result.trace] == ["search"] + ["inspect_pages"] * ((len(candidates) + 9) // 10)


class _ScriptedChatServer(BaseHTTPRequestHandler):
    replies: list[str] = []
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        content = type(self).replies[min(len(type(self).requests) - 1, len(type(self).replies) - 1)]
        payload = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture()
def chat_server():
    _ScriptedChatServer.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", _ScriptedChatServer
    server.shutdown()


def test_openai_planner_over_a_loopback_endpoint(corpus, chat_server):
    index, by_text = corpus
    url, handler = chat_server
    ten = index.handles[:10]
    handler.replies = [
        '{"tool": "search", "args": {"query": "zzplace package", "top_k": 3}, "thought": "find it"}',
        "Here you go: ```json\n" + json.dumps({"tool": "inspect_pages", "args": {"handles": ten[:1]}}) + "\n```",
        json.dumps(
            {"tool": "submit", "args": {"ranking": [{"handle": h, "evidence": [], "rationale": "x"} for h in ten]}}
        ),
    ]
    planner = OpenAIPlanner(model="tiny", base_url=url, api_key="k")
    result = SearchAgent(index, planner).run("zzplace?")
    assert result.handles == ten and not result.forced and result.steps == 3
    assert result.usage.prompt_tokens == 300 and result.usage.calls == 3
    second = handler.requests[1]["messages"]
    assert "search result" in second[-1]["content"] and by_text["The zzplace package"] in second[-1]["content"]
    third = handler.requests[2]["messages"][-1]["content"]
    assert any(
        part.get("type") == "image_url" and part["image_url"]["url"].startswith("data:image/jpeg;base64,")
        for part in third
    )


def test_openai_planner_gets_a_forced_ranking_only_turn(corpus, chat_server):
    index, _ = corpus
    url, handler = chat_server
    ten = index.handles[2:12]
    handler.replies = ["I would rather chat."] * 2 + [json.dumps({"ranking": ten})]
    result = SearchAgent(index, OpenAIPlanner(model="tiny", base_url=url), budget=2).run("q")
    assert result.forced and result.handles == ten and len(handler.requests) == 3
    assert "budget is spent" in handler.requests[2]["messages"][-1]["content"]
    assert "unknown tool 'invalid_reply'" in result.trace[0].data["error"]
