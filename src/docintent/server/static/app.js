// The docintent viewer: ask a question about a page, watch the steps arrive, open any run the service holds
// (asked here or posted to the API), try the sample page, browse benchmark runs.
// Plain JavaScript, no build step. Every request goes through api() so a bearer token can be attached;
// images and the event stream are fetched the same way for that reason.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
};

let token = sessionStorage.getItem("docintent-token") || "";
// The page is served with data-token="required" when the service wants a bearer token; only then is the
// Token field offered.
$("#token-button").hidden = document.body.dataset.token !== "required";
let selectedFile = null;
let currentRun = null;

async function api(path, options = {}) {
  const headers = new Headers(options.headers || {});
  if (token) headers.set("Authorization", `Bearer ${token}`);
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401) askToken();
  return response;
}

async function errorText(response) {
  try { return (await response.json()).error || response.statusText; } catch { return `${response.status} ${response.statusText}`; }
}

// Images go through api() only when a token is needed; otherwise the browser loads them directly.
async function showImage(img, url) {
  if (!token) { img.src = url; return; }
  const response = await api(url);
  if (response.ok) img.src = URL.createObjectURL(await response.blob());
}

function askToken() {
  $("#token-button").hidden = false;
  const dialog = $("#token-dialog");
  if (dialog.open) return;
  $("#token-input").value = token;
  dialog.showModal();
}

$("#token-dialog").addEventListener("close", () => {
  if ($("#token-dialog").returnValue === "save") {
    token = $("#token-input").value.trim();
    sessionStorage.setItem("docintent-token", token);
    init();
  }
});
$("#token-button").addEventListener("click", askToken);

// -- configuration and routing ---------------------------------------------------------------------------

function fill(select, values, chosen) {
  select.replaceChildren(...values.map((v) => el("option", { value: v, selected: v === chosen, text: v })));
}

async function init() {
  const response = await api("/v1/config");
  if (!response.ok) return;
  const config = await response.json();
  fill($("#task"), config.tasks, "doc");
  fill($("#strategy"), config.strategies, "docintent");
  fill($("#brain"), config.brains, config.default_brain);
  $("#max_rounds").value = config.max_rounds;
  $("#max_rounds").max = config.max_rounds;
  $("#nav-runs").hidden = !config.runs_browser;
  route();
  loadSample();
}

function route() {
  const hash = location.hash || "#/";
  const runs = hash.startsWith("#/runs");
  $("#view-ask").hidden = runs;
  $("#view-runs").hidden = !runs;
  $("#nav-ask").toggleAttribute("aria-current", !runs);
  $("#nav-runs").toggleAttribute("aria-current", runs);
  if (runs) { showRuns(decodeURIComponent(hash.slice("#/runs/".length))); return; }
  const opened = hash.match(/^#\/run\/([0-9a-f]{32})$/);
  if (opened && (!currentRun || currentRun.id !== opened[1])) watch(opened[1]);
  if (!opened) { currentRun = null; $("#run").hidden = true; }
  listRuns();
}
window.addEventListener("hashchange", route);

// -- choosing a file ---------------------------------------------------------------------------------------

function choose(file) {
  selectedFile = file;
  $("#drop-text").textContent = file ? `${file.name} (${(file.size / 1024).toFixed(0)} KB)` : "Drop a page image or PDF here";
  const preview = $("#preview");
  preview.hidden = !(file && file.type.startsWith("image/"));
  if (!preview.hidden) preview.src = URL.createObjectURL(file);
}

$("#file").addEventListener("change", (e) => choose(e.target.files[0] || null));
const drop = $("#drop");
drop.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); $("#file").click(); } });
for (const kind of ["dragenter", "dragover"]) drop.addEventListener(kind, (e) => { e.preventDefault(); drop.classList.add("over"); });
for (const kind of ["dragleave", "drop"]) drop.addEventListener(kind, () => drop.classList.remove("over"));
drop.addEventListener("drop", (e) => { e.preventDefault(); if (e.dataTransfer.files.length) choose(e.dataTransfer.files[0]); });
document.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !$("#view-ask").hidden) $("#ask-form").requestSubmit();
});

// -- asking ---------------------------------------------------------------------------------------------------

$("#ask-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const error = $("#form-error");
  error.hidden = true;
  const question = $("#question").value.trim();
  if (!selectedFile) { showFormError("Choose a page image or PDF first."); $("#drop").focus(); return; }
  if (!question) { showFormError("Type a question."); $("#question").focus(); return; }
  const form = new FormData();
  form.append("file", selectedFile);
  form.append("question", question);
  for (const name of ["task", "strategy", "brain", "max_rounds"]) form.append(name, $(`#${name}`).value);
  if ($("#pages").value.trim()) form.append("pages", $("#pages").value.trim());
  $("#ask-button").disabled = true;
  try {
    const response = await api("/v1/ask", { method: "POST", body: form });
    if (!response.ok) { showFormError(await errorText(response)); return; }
    const run = await response.json();
    location.hash = `#/run/${run.id}`;  // a link to this run; the route opens it
  } catch (err) {
    showFormError(`The service did not answer: ${err}`);
  } finally {
    $("#ask-button").disabled = false;
  }
});

function showFormError(text) { const error = $("#form-error"); error.textContent = text; error.hidden = false; }

function setStatus(status, extra = "") {
  const node = $("#run-status");
  node.className = `status ${status}`;
  const words = { queued: "Waiting for a worker…", running: "Running…", done: "Done", failed: "Failed", timeout: "Stopped: time limit" };
  node.textContent = (words[status] || status) + extra;
}

async function watch(id) {
  currentRun = { id, steps: [] };
  $("#run").hidden = false;
  $("#answer").hidden = true;
  $("#evidence-box").hidden = true;
  $("#answer-evidence").hidden = true;
  $("#steps").replaceChildren();
  $("#trace-link").hidden = true;
  setStatus("queued");
  const run = currentRun;
  await readEvents(`/v1/runs/${id}/events`, (kind, data) => {
    if (run !== currentRun) return;
    if (kind === "status") setStatus(data.status);
    else if (kind === "step") addStep(data);
    else if (kind === "done") finish(data);
  });
}

// Server-Sent Events read through fetch (EventSource cannot send an Authorization header).
async function readEvents(url, onEvent) {
  const response = await api(url, { headers: { Accept: "text/event-stream" } });
  if (!response.ok) { setStatus("failed", `: ${await errorText(response)}`); return; }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let kind = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) kind = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) onEvent(kind, JSON.parse(data));
    }
  }
}

const PHASES = { A: "decide", B: "review", tool: "tool", answer: "answer", diagnose: "diagnose", inspect: "inspect", locate: "page" };

function pageUrl(hash) { return `/v1/runs/${currentRun.id}/pages/${hash}.jpg`; }

function addStep(step) {
  currentRun.steps.push(step);
  const item = el("li", { class: "step", dataset: { phase: step.phase, action: step.action, tool: step.tool || "" } });
  const head = el("div", { class: "step-head" },
    el("span", { class: "n", text: `${step.index + 1}.` }),
    el("span", { class: "phase", text: step.round !== null && step.round !== undefined ? `round ${step.round + 1} · ${PHASES[step.phase] || step.phase}` : PHASES[step.phase] || step.phase }),
    step.tool ? el("span", { class: "tool", text: step.tool }) : null,
    el("span", { class: "action", text: describe(step) }));
  const badge = verdictBadge(step);
  if (badge) head.append(badge);
  head.append(el("span", { class: "secs", text: `${step.seconds.toFixed(2)} s` }));
  item.append(head);
  if (step.reason) item.append(el("p", { class: "reason", text: step.reason }));
  if (step.phase === "tool" && step.action === "applied" && step.before && step.after) {
    item.dataset.after = step.after;
    item.append(compare(step));
  }
  if (step.phase === "B" && step.after) {
    // The verdict also marks the tool step it judges.
    const judged = [...document.querySelectorAll("#steps li.step[data-phase=tool]")].find((li) => li.dataset.after === step.after);
    if (judged) setVerdict(judged, step.action === "keep" ? "kept" : "rolled back");
  }
  if (step.phase === "B") item.classList.add(step.action === "keep" ? "kept" : "rolled-back");
  $("#steps").append(item);
}

function describe(step) {
  if (step.text) return step.text;  // the step in plain words, as the service describes it
  if (step.action === "answer") return `answer: ${step.data && step.data.answer !== undefined ? JSON.stringify(step.data.answer) : ""}`;
  if (step.action === "use_tool") return "use tool";
  if (step.action === "applied") return "applied";
  if (step.action === "diagnosed") return "diagnosed";
  if (step.action === "no_change") return "ran; the page did not change";
  return step.action.replace("_", " ");
}

function verdictBadge(step) {
  if (step.phase === "B") return el("span", { class: `badge ${step.action === "keep" ? "kept" : "rolled-back"}`, text: step.action === "keep" ? "kept" : "rolled back" });
  if (step.phase === "tool" && step.action === "applied") return el("span", { class: "badge pending", text: "awaiting review" });
  if (step.action === "failed" || step.action === "skipped") return el("span", { class: `badge ${step.action}`, text: step.action });
  if (step.action === "no_change") return el("span", { class: "badge", text: "no change" });
  return null;
}

function setVerdict(item, verdict) {
  const badge = $(".badge", item);
  const cls = verdict === "kept" ? "kept" : "rolled-back";
  badge.className = `badge ${cls}`;
  badge.textContent = verdict;
  item.classList.remove("kept", "rolled-back");
  item.classList.add(cls);
}

function compare(step) {
  const before = el("img", { class: "before", alt: `page before ${step.tool}` });
  const after = el("img", { class: "after", alt: `page after ${step.tool}` });
  const box = el("div", { class: "compare", style: "--pos: 50%" }, before, after, el("div", { class: "divider" }),
    el("span", { class: "tag l", text: "before" }), el("span", { class: "tag r", text: "after" }));
  const slider = el("input", { type: "range", min: "0", max: "100", value: "50", class: "slider",
    "aria-label": `${step.tool}: before (right end) to after (left end)` });
  slider.addEventListener("input", () => box.style.setProperty("--pos", `${slider.value}%`));
  const toggle = el("button", { type: "button", class: "link side-toggle", text: "side by side" });
  const side = el("div", { class: "side", hidden: true });
  toggle.addEventListener("click", async () => {
    const showSide = side.hidden;
    if (showSide && !side.childElementCount) {
      for (const [label, hash] of [["before", step.before], ["after", step.after]]) {
        const img = el("img", { alt: `page ${label} ${step.tool}` });
        side.append(el("figure", {}, img, el("figcaption", { text: label })));
        showImage(img, pageUrl(hash));
      }
    }
    side.hidden = !showSide;
    box.hidden = showSide;
    slider.disabled = showSide;
    toggle.textContent = showSide ? "slider" : "side by side";
  });
  // A tool that changes the page's shape (a rotation, dewarping) is shown side by side, not overlaid.
  const loaded = (img) => new Promise((resolve) => {
    img.addEventListener("load", resolve, { once: true });
    img.addEventListener("error", resolve, { once: true });
  });
  Promise.all([loaded(before), loaded(after)]).then(() => {
    const a = before.naturalWidth / before.naturalHeight, b = after.naturalWidth / after.naturalHeight;
    if (Math.abs(a - b) > 0.02 * a && side.hidden) toggle.click();
  });
  showImage(before, pageUrl(step.before));
  showImage(after, pageUrl(step.after));
  return el("div", { class: "compare-wrap" }, box, side,
    el("div", { class: "compare-controls" }, el("span", { text: "after" }), slider, el("span", { text: "before" }), toggle));
}

async function finish(summary) {
  setStatus(summary.status, summary.seconds !== null && summary.seconds !== undefined ? ` in ${summary.seconds.toFixed(2)} s` : "");
  for (const item of document.querySelectorAll("#steps li.step[data-phase=tool][data-action=applied]")) {
    const badge = $(".badge", item);
    if (badge.classList.contains("pending")) {
      setVerdict(item, summary.tools_rolled_back.includes(item.dataset.tool) ? "rolled back" : "kept");
    }
  }
  const link = $("#trace-link");
  link.href = summary.links.trace;
  link.hidden = false;
  link.onclick = token ? async (e) => {
    e.preventDefault();
    const response = await api(summary.links.trace);
    window.open(URL.createObjectURL(await response.blob()));
  } : null;
  $("#answer").hidden = false;
  $("#answer-value").textContent = summary.answer || "(no answer)";
  $("#answer-meta").textContent = `confidence ${(summary.confidence || 0).toFixed(2)} · strategy ${summary.strategy} · brain ${summary.brain}`;
  $("#answer-tools").textContent = `kept: ${summary.tools_kept.join(", ") || "none"} · rolled back: ${summary.tools_rolled_back.join(", ") || "none"}`;
  const error = $("#answer-error");
  error.hidden = !summary.error;
  error.textContent = summary.error || "";
  showProvenance(summary);
  listRuns();
}

// Where the answer came from, drawn as soon as the run has finished: the run's own figures say which page and
// where on it (the box on the page as given; on the restored page when a restoration moved the page).
async function showProvenance(summary) {
  const evidence = $("#answer-evidence");
  const lines = (summary.evidence || []).map((line) => `“${line.text}” (OCR confidence ${Number(line.confidence).toFixed(2)})`);
  const readOn = (summary.read_on || []).length ? `read on the page after ${summary.read_on.join(", then ")}` : "read on the page as given";
  evidence.textContent = summary.answer ? `page ${summary.page} · ${readOn}${lines.length ? " · evidence: " + lines.join("; ") : ""}` : "";
  evidence.hidden = !summary.answer;
  let pageHash = summary.final_page, box = null, where = "final page";
  if (summary.answer && summary.box && summary.answer_page) {
    pageHash = summary.answer_page; box = summary.box; where = `page ${summary.page} as given`;
  } else if (summary.answer && summary.read_box && summary.read_page) {
    pageHash = summary.read_page; box = summary.read_box; where = `page ${summary.page} as restored`;
  }
  if (!pageHash) return;
  const frame = $("#final-frame");
  frame.dataset.page = String(summary.page || "");
  const img = $("#final-image");
  const loaded = new Promise((resolve) => { img.onload = resolve; img.onerror = resolve; });
  await showImage(img, pageUrl(pageHash));
  await loaded;
  const caption = $("#evidence-caption");
  if (box) {
    const text = (summary.evidence || []).map((line) => line.text).join(" / ");
    drawBox(box);
    caption.textContent = `${where}; the box marks where "${summary.answer}" was read${text ? ` (${text})` : ""}`;
    return;
  }
  if (!summary.answer) { caption.textContent = where; return; }
  // A brain that does not say where it read the answer: look for the answer's text on the final page (an OCR
  // of the page, which takes a few seconds), and say so while it runs.
  caption.textContent = `${where}; looking for the answer on the page…`;
  const response = await api(summary.links.evidence);
  if (!response.ok) { caption.textContent = where; return; }
  const found = await response.json();
  if (!found.box) { caption.textContent = `${where} (the answer was not found in its text)`; return; }
  drawBox(found.box);
  caption.textContent = `${where}; the box marks "${found.text}", where the answer was read`;
}

function drawBox([x0, y0, x1, y1]) {
  const marker = $("#evidence-box");
  Object.assign(marker.style, { left: `${x0 * 100}%`, top: `${y0 * 100}%`, width: `${(x1 - x0) * 100}%`, height: `${(y1 - y0) * 100}%` });
  marker.hidden = false;
}

// -- the runs this service holds, and the sample page ------------------------------------------------------------

const STATUS_WORDS = { queued: "waiting", running: "running", done: "done", failed: "failed", timeout: "stopped: time limit" };

async function listRuns() {
  const list = $("#run-list"), note = $("#recent-note");
  const response = await api("/v1/runs?limit=50");
  if (!response.ok) { note.textContent = await errorText(response); return; }
  const { runs, total } = await response.json();
  note.textContent = runs.length
    ? (total > runs.length ? `The newest ${runs.length} of ${total} runs.` : "Runs asked here or posted to the API (POST /v1/ask), newest first.")
    : "No runs yet. Runs asked here or posted to the API (POST /v1/ask) appear here.";
  list.replaceChildren(...runs.map((run) => el("li", { dataset: { id: run.id, status: run.status }, "aria-current": currentRun && currentRun.id === run.id ? "true" : null },
    el("a", { href: `#/run/${run.id}`, text: run.question }),
    el("span", { class: `status ${run.status}`, text: STATUS_WORDS[run.status] || run.status }),
    run.answer ? el("span", { class: "run-answer", text: run.answer }) : null,
    el("span", { class: "run-when", text: `${run.input} · ${new Date(run.created * 1000).toLocaleString()}` }))));
}
$("#recent-refresh").addEventListener("click", listRuns);

let sample = null;

async function loadSample() {
  if (sample) return;
  const response = await api("/v1/sample");
  if (!response.ok) { $("#sample-text").textContent = `No sample page: ${await errorText(response)}`; return; }
  sample = await response.json();
  $("#sample-text").textContent = `A damaged page (${sample.damage}). Question: “${sample.question}”`;
  const img = $("#sample-image");
  img.alt = `the sample page: ${sample.damage}`;
  img.hidden = false;
  showImage(img, sample.image);
  $("#sample-button").disabled = false;
}

// The sample goes through the same form as a file of one's own: chosen, its question typed, then asked.
$("#sample-button").addEventListener("click", async () => {
  if (!sample) return;
  const response = await api(sample.image);
  if (!response.ok) { showFormError(await errorText(response)); return; }
  choose(new File([await response.blob()], sample.name, { type: "image/jpeg" }));
  $("#question").value = sample.question;
  $("#task").value = sample.task;
  $("#ask-form").requestSubmit();
});

// -- the runs browser --------------------------------------------------------------------------------------------

function table(header, cells, id) {
  const numeric = (text) => /^-?[\d.,]+%?$/.test(text);
  return el("div", { class: "table-scroll" }, el("table", { id },
    el("thead", {}, el("tr", {}, ...header.map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, ...cells.map((row) => el("tr", {}, ...row.map((c) => el("td", { class: numeric(c) ? "num" : null, text: c })))))));
}

async function showRuns(name) {
  const list = $("#bench-list");
  const response = await api("/v1/benchmarks");
  if (!response.ok) { list.replaceChildren(el("li", { class: "error", text: await errorText(response) })); return; }
  const runs = await response.json();
  list.replaceChildren(...runs.map((r) => el("li", {}, el("a", { href: `#/runs/${encodeURIComponent(r.name)}`, "aria-current": r.name === name ? "page" : null,
    text: r.error ? `${r.name} (unreadable)` : `${r.name} · ${r.rows} rows · ${r.strategies.join(", ")}` }))));
  const article = $("#bench");
  if (!name) { article.hidden = true; return; }
  article.hidden = false;
  article.replaceChildren(el("p", { class: "meta", text: "Building the report…" }));
  const answer = await api(`/v1/benchmarks/${encodeURIComponent(name)}`);
  if (!answer.ok) { article.replaceChildren(el("p", { class: "error", text: await errorText(answer) })); return; }
  const report = await answer.json();
  const f = report.facts;
  const parts = [`${f.rows} rows`, f.brain && `brain ${f.brain}`, f.dataset && `dataset ${f.dataset}`,
    f.seed !== null && f.seed !== undefined && `seed ${f.seed}`, f.commit && `commit ${f.commit.slice(0, 10)}`].filter(Boolean);
  const nodes = [el("h3", { text: report.name }), el("p", { class: "meta", text: parts.join(" · ") }),
    el("h4", { text: "Table 1: strategies" }), table(report.table1.header, report.table1.cells, "table1")];
  if (report.table2) nodes.push(el("h4", { text: "Table 2: ablations" }), table(report.table2.header, report.table2.cells, "table2"));
  nodes.push(el("p", { class: "meta", text: "Scores and consistencies in percent (WildDoc rules); Avg. Tools = tools run per sample; failed rows count as wrong." }));
  nodes.push(el("h4", { text: "Score by recorded degradation" }), table(report.degradation_cells.header, report.degradation_cells.cells, "degradations"));
  for (const [kind, url] of Object.entries(report.plots)) {
    const img = el("img", { class: "plot", alt: `score by ${kind.replace(/s$/, "")}`, dataset: { kind } });
    nodes.push(img);
    showImage(img, url);
  }
  if (report.failures.length) {
    nodes.push(el("h4", { text: "Failures" }));
    for (const fail of report.failures) {
      const facts = el("ul", {},
        el("li", { text: `question: ${fail.question}` }), el("li", { text: `gold: ${fail.gold.join(" | ")}` }),
        el("li", { text: `answer: ${JSON.stringify(fail.answer)} (score ${Number(fail.score || 0).toFixed(2)})` }));
      if (fail.degradations.length) facts.append(el("li", { text: `degradations: ${fail.degradations.join(", ")}` }));
      if (fail.error) facts.append(el("li", { text: `error: ${fail.error}` }));
      if (fail.solved_by.length) facts.append(el("li", { text: `answered correctly by: ${fail.solved_by.join(", ")}` }));
      const box = el("div", { class: "failure" }, el("h5", { text: `${fail.sample} — ${fail.strategy}` }), facts);
      for (const image of fail.images) {
        const img = el("img", { alt: image.caption });
        box.append(el("figure", {}, img, el("figcaption", { text: image.caption })));
        showImage(img, image.url);
      }
      nodes.push(box);
    }
  }
  article.replaceChildren(...nodes);
}

init();
