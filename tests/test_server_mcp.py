"""``docintent mcp`` started as a subprocess and driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import sys

import numpy as np

from needs import need_module

need_module("mcp", "the service needs the serve extra: pip install 'docintent[serve]'")

from mcp import Client, StdioServerParameters  # noqa: E402
from PIL import Image  # noqa: E402

from retrieval_helpers import FILLER, make_pdf  # noqa: E402
from server_helpers import ANSWER, damaged_page  # noqa: E402


def _image(content) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(content.data))).convert("L"), dtype=np.float64)


def test_mcp_tools_over_stdio(tmp_path):
    from docintent.retrieval import build_index

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    page_path = allowed / "invoice.png"
    Image.fromarray(damaged_page()).save(page_path)
    pdf = make_pdf(tmp_path / "manual.pdf", FILLER[:4] + ["Warranty\nThe warranty lasts 24 months from delivery."])
    build_index([pdf], tmp_path / "index", text="pdf", progress=False)
    (tmp_path / "secret.png").write_bytes(page_path.read_bytes())
    letter = make_pdf(
        allowed / "letter.pdf",
        ["Dear customer\nThank you for your order of garden chairs.", "Invoice INV-2041\nTotal amount due: $1,250.00"],
    )

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "docintent", "mcp", "--allow", str(allowed), "--index", str(tmp_path / "index")],
        env=dict(os.environ),
    )

    async def session():
        async with Client(params) as client:
            info = client.server_info
            tools = {t.name: t for t in (await client.list_tools()).tools}
            restored = await client.call_tool(
                "restore",
                {"tools": ["deshadowing"], "image_path": str(page_path), "output_path": str(allowed / "restored.png")},
            )
            answered = await client.call_tool(
                "ask", {"question": "What is the total amount due?", "image_path": str(page_path), "strategy": "none"}
            )
            encoded = base64.b64encode(page_path.read_bytes()).decode()
            diagnosed = await client.call_tool("diagnose", {"image_base64": encoded})
            zoomed = await client.call_tool("zoom", {"image_path": str(page_path), "bbox": [0, 500, 1000, 1000]})
            found = await client.call_tool("search", {"query": "how long is the warranty", "k": 2})
            outside = await client.call_tool("diagnose", {"image_path": str(tmp_path / "secret.png")})
            unknown = await client.call_tool("restore", {"tools": ["sharpen_everything"], "image_path": str(page_path)})
            whole = await client.call_tool(
                "ask", {"question": "What is the total amount due?", "image_path": str(letter), "strategy": "none"}
            )
            zero = await client.call_tool("diagnose", {"image_path": str(page_path), "page": 0})
            extracted = await client.call_tool("extract", {"image_path": str(letter), "pages": "2"})
            retired = await client.call_tool(
                "ask", {"question": "What is the total?", "image_path": str(letter), "page": 0}
            )
            return (
                tools,
                restored,
                answered,
                diagnosed,
                zoomed,
                found,
                outside,
                unknown,
                whole,
                zero,
                extracted,
                info,
                retired,
            )

    (tools, restored, answered, diagnosed, zoomed, found, outside, unknown, whole, zero, extracted, info, retired) = (
        asyncio.run(session())
    )
    assert retired.is_error and "counted pages from 0 and is gone" in retired.content[0].text

    from docintent import __version__

    assert info.name == "docintent" and info.version == __version__

    assert set(tools) == {"ask", "restore", "diagnose", "zoom", "search", "extract"}
    assert tools["ask"].input_schema["required"] == ["question"]
    assert {"question", "image_path", "image_base64", "task", "strategy"} <= set(
        tools["ask"].input_schema["properties"]
    )
    assert tools["restore"].input_schema["properties"]["tools"]["type"] == "array"
    assert tools["zoom"].input_schema["required"] == ["bbox"]
    assert all(t.description for t in tools.values())

    # restore: the restored page comes back as image content, brighter where the shadow was, and is saved
    assert not restored.is_error
    summary = json.loads(restored.content[0].text)
    assert summary["tools"] == ["deshadowing"] and summary["saved"] == str((allowed / "restored.png").resolve())
    image = next(c for c in restored.content if c.type == "image")
    assert image.mime_type in ("image/png", "image/jpeg")
    after = _image(image)
    before = np.asarray(Image.open(page_path).convert("L"), dtype=np.float64)
    assert after.shape == before.shape
    right = slice(before.shape[1] * 3 // 4, None)
    assert after[:, right].mean() > before[:, right].mean() + 30
    assert (allowed / "restored.png").is_file()

    # ask: the answer with its trace, and the final page as an image
    assert not answered.is_error
    result = json.loads(answered.content[0].text)
    assert result["answer"] == ANSWER and result["strategy"] == "none" and result["trace"]
    assert any(c.type == "image" for c in answered.content)
    # where the answer came from comes first: the page, the box on it, the evidence lines
    assert list(result)[:6] == ["answer", "confidence", "page", "box", "evidence", "read_on"]
    assert result["page"] == 1 and result["box"] and any(ANSWER in e["text"] for e in result["evidence"])

    # a whole PDF: the page that holds the answer is found and named (counted from 1)
    assert not whole.is_error
    document = json.loads(whole.content[0].text)
    assert document["answer"] == ANSWER and document["page"] == 2
    assert [e["text"] for e in document["evidence"]] == ["Total amount due: $1,250.00"]
    assert zero.is_error and "pages count from 1" in zero.content[0].text

    # extract: the chosen page of the PDF as structure, read from its text layer, every block with its box
    assert not extracted.is_error
    structure = json.loads(extracted.content[0].text)
    (only,) = structure["documents"][0]["pages"]
    assert structure["schema"] == "docintent.extract" and only["page"] == 2 and only["source"] == "text-layer"
    assert [b["text"] for b in only["blocks"]][-1] == "Total amount due: $1,250.00"
    assert all(0 <= v <= 1 for b in only["blocks"] for v in b["box"])

    assert not diagnosed.is_error
    measured = json.loads(diagnosed.content[0].text)
    assert set(measured["severities"]) >= {"blur", "shadow", "warp"}
    assert "shadow" in measured["diagnosis"]

    assert not zoomed.is_error
    assert "1,250.00" in json.loads(zoomed.content[0].text)["text"]

    assert not found.is_error
    hits = json.loads(found.content[0].text)["hits"]
    assert hits[0]["page"] == 5 and "warranty" in hits[0]["snippet"].lower()

    assert outside.is_error and "outside the folders this server may use" in outside.content[0].text
    assert unknown.is_error and "unknown tool 'sharpen_everything'" in unknown.content[0].text


def test_mcp_paths_through_a_link_out_or_dot_dot_are_refused_and_nothing_outside_is_touched(tmp_path):
    """Every tool that takes a path, given one that leads out of the allowed folder through a link or through
    '..', answers an error naming the allowed folder; the picture outside is neither read into a reply nor written;
    an output path naming a named pipe is refused instead of waited on."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    page_path = allowed / "page.png"
    Image.fromarray(damaged_page()).save(page_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.png"
    secret.write_bytes(page_path.read_bytes())
    before = secret.read_bytes()
    (allowed / "link").symlink_to(outside, target_is_directory=True)
    (allowed / "out.png").symlink_to(secret)
    os.mkfifo(allowed / "pipe.png")
    through_link, dot_dot = str(allowed / "link" / "secret.png"), str(allowed / ".." / "outside" / "secret.png")
    calls = []
    for path in (through_link, dot_dot):
        calls += [
            ("ask", {"question": "What is the total amount due?", "image_path": path, "strategy": "none"}),
            ("restore", {"tools": ["deshadowing"], "image_path": path}),
            ("diagnose", {"image_path": path}),
            ("extract", {"image_path": path}),
            ("zoom", {"bbox": [0, 0, 1000, 1000], "image_path": path}),
        ]
    for target in (str(allowed / "out.png"), dot_dot):
        calls.append(("restore", {"tools": ["deshadowing"], "image_path": str(page_path), "output_path": target}))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "docintent", "mcp", "--allow", str(allowed)], env=dict(os.environ)
    )

    async def session():
        async with Client(params) as client:
            replies = [await client.call_tool(name, arguments) for name, arguments in calls]
            piped = await client.call_tool(
                "restore",
                {"tools": ["deshadowing"], "image_path": str(page_path), "output_path": str(allowed / "pipe.png")},
            )
            return replies, piped

    replies, piped = asyncio.run(asyncio.wait_for(session(), 120))
    for (name, arguments), reply in zip(calls, replies):
        assert reply.is_error, (name, arguments)
        text = reply.content[0].text
        assert "outside the folders this server may use" in text and str(allowed.resolve()) in text, text
        assert not any(c.type == "image" for c in reply.content)
    assert piped.is_error and "not a regular file" in piped.content[0].text
    assert secret.read_bytes() == before and sorted(p.name for p in outside.iterdir()) == ["secret.png"]
