// The Dreams page: polls the JSON routes and updates in place; actions POST with the token.
"use strict";
(function () {
  const POLL_MS = 3000;
  const SIGNALS = ["frequency", "relevance", "diversity", "recency"];
  const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || "";
  const workspace = meta("memcore-workspace");
  const $ = (id) => document.getElementById(id);

  // -- the token: embedded (loopback page), else asked for once and kept in localStorage ----
  const TOKEN_KEY = "memcore-token";
  const readToken = meta("memcore-read-token") === "1";

  function token() {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromHash) {
      localStorage.setItem(TOKEN_KEY, fromHash);
      history.replaceState(null, "", location.pathname + location.search);
    }
    return meta("memcore-token") || localStorage.getItem(TOKEN_KEY) || "";
  }

  function askToken(message) {
    $("token-bar").hidden = false;
    text($("token-note"), message || "");
  }

  function authHeaders() {
    const tok = token();
    return tok ? { Authorization: `Bearer ${tok}` } : {};
  }

  async function answer(res, sent) {
    const data = await res.json();
    if (res.status === 401) {
      if (sent) {
        if (localStorage.getItem(TOKEN_KEY) === sent) localStorage.removeItem(TOKEN_KEY);
        askToken("That token was refused; paste the one in gateway.token.");  // ask again
      } else if (!$("token-note").textContent) {
        askToken("This gateway needs its token; paste the one in gateway.token.");
      }
    }
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
  }

  function q(path) {
    const sep = path.includes("?") ? "&" : "?";
    return `${path}${sep}workspace=${encodeURIComponent(workspace)}`;
  }

  // the answer to a request boot.js sent before the page was drawn (the same URL), taken once
  function early(url) {
    const sent = window.memcoreEarly && window.memcoreEarly.get(url);
    if (sent) window.memcoreEarly.delete(url);
    return sent;
  }

  async function getJSON(path) {
    const sent = token();
    const url = q(path);
    const res = await (early(url) ||
      fetch(url, { headers: { Accept: "application/json", ...authHeaders() } }));
    return answer(res, sent);
  }

  async function post(path, body) {
    if (!token()) {
      askToken("Actions need the gateway token (in gateway.token of your memcore folder).");
      throw new Error("actions need the gateway token");
    }
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...authHeaders() },
      body: JSON.stringify({ ...body, workspace }),
    });
    return answer(res, token());
  }

  function text(el, value) {
    const s = value === null || value === undefined ? "–" : String(value);
    if (el && el.textContent !== s) el.textContent = s;
  }

  function el(tag, cls, content) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }

  function showAlert(messages) {
    const box = $("alert");
    const list = messages.filter(Boolean);
    box.hidden = list.length === 0;
    text(box, list.join("  ·  "));
  }

  // "2026-11-30T06:00+01:00" -> "2026-11-30 06:00 (+01:00)"
  function localTime(iso) {
    const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2})?(.*)$/.exec(iso || "");
    return m ? `${m[1]} ${m[2]}${m[3] && m[3] !== "Z" ? ` (${m[3]})` : ""}` : iso;
  }

  // "2026-11-30T05:00:00.000Z" -> "2026-11-30 05:00 UTC"
  function utcTime(iso) {
    const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso || "");
    return m ? `${m[1]} ${m[2]} UTC` : iso;
  }

  // -- times: local with a relative part ("in 5 h", "12 min ago"), UTC on hover -----------
  function relative(iso) {
    const ms = new Date(iso) - Date.now();
    if (Number.isNaN(ms)) return "";
    const a = Math.abs(ms) / 1000;
    const v = a < 60 ? `${Math.round(a)} s` : a < 3600 ? `${Math.round(a / 60)} min` :
      a < 172800 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
    return ms >= 0 ? `in ${v}` : `${v} ago`;
  }

  // a browser-local time for an ISO instant: "2026-12-01 14:05 (12 min ago)"
  function whenText(iso) {
    const d = new Date(iso || "");
    if (Number.isNaN(d.getTime())) return iso || "–";
    const p = (n) => String(n).padStart(2, "0");
    const local = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
      `${p(d.getHours())}:${p(d.getMinutes())}`;
    return `${local} (${relative(iso)})`;
  }

  function setWhen(node, shown, utcIso) {
    text(node, shown);
    if (node) node.title = utcIso ? utcTime(utcIso) : "";
  }

  // -- gates in words: "needs 3 recalls, has 2"; scores with 3 decimals ---------------------
  function gateWords(g) {
    if (!g) return "";
    const fix = (v) => (typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : v);
    if (g.name === "recallCount") return `needs ${g.required} recalls, has ${g.actual}`;
    if (g.name === "uniqueQueries") return `needs ${g.required} different queries, has ${g.actual}`;
    if (g.name === "score") return `needs score ${fix(g.required)}, has ${fix(g.actual)}`;
    return `${g.name}: needs ${fix(g.required)}, has ${fix(g.actual)}`;
  }

  const MAIN_COUNTERS = ["promoted", "merged", "conflicts", "decayed", "forgotten", "remaining", "skipped"];
  const HIDDEN_COUNTERS = ["durationMs", "ranAt", "runId", "mode", "backend"];

  function counterText(res) {
    const scalars = Object.entries(res).filter(([, v]) => v !== null && typeof v !== "object");
    const main = scalars.filter(([k]) => MAIN_COUNTERS.includes(k));
    const shown = main.length ? main : scalars.filter(([k]) => !HIDDEN_COUNTERS.includes(k));
    return shown.map(([k, v]) => `${k}=${v}`).join(" ");
  }

  function renderStatus(s) {
    text($("short-term"), s.shortTermCount);
    text($("long-term"), s.longTermCount);
    const size = s.memorySize || {};
    text($("memory-size"),
      `${size.chars || 0} / ${size.budgetChars || 0} chars${size.overBudget ? " (over budget)" : ""}`);
    const jobs = Object.entries(s.jobs || {}).sort(([a], [b]) => a.localeCompare(b));
    text($("next-jobs"), jobs.map(([name, j]) =>
      `${name} ${j.nextRunAt ? whenText(j.nextRunAt.utc) : "not scheduled"}`).join(" · "));
    text($("promoted"), s.promotedTotal);
    text($("promoted-today"), s.promotedToday);
    const next = s.nextRunAt;
    setWhen($("next-cycle"), next ? `${localTime(next.local)} · ${relative(next.utc)}` : "disabled",
      next && next.utc);
    text($("next-cycle-utc"), next ? `${utcTime(next.utc)} · ${next.timezone}` : "mode is off");
    text($("mode"), s.mode);
    $("mode").dataset.modeCurrent = s.mode;
    text($("cadence"), s.enabled ? `${s.cron} (${s.timezone})` : "no schedule");
    document.querySelectorAll("button.mode").forEach((b) => {
      b.classList.toggle("active", b.dataset.mode === s.mode);
      b.setAttribute("aria-pressed", String(b.dataset.mode === s.mode));
    });
    $("dream-now").disabled = Boolean(s.running);
    if (s.running) showStatus(`${s.running} is running…`, 0);
    else if (/ is running…$/.test($("action-status").textContent)) showStatus("", 0);
    const alerts = [];
    if (s.configError) {
      const since = s.configErrorSince ? `invalid since ${whenText(s.configErrorSince)}; ` : "";
      alerts.push(`Config error: ${s.configError} (${since}${s.scheduleNote || "defaults in use"})`);
    }
    if (s.workspaceError) alerts.push(`Workspace error: ${s.workspaceError}`);
    if (s.storeHealth && s.storeHealth.error) alerts.push(`Recall store: ${s.storeHealth.error}`);
    alerts.push(...problemBanners(s));
    showAlert(alerts);
    lastStatus = s;
  }

  // -- banners: an unreadable MEMORY.md, a job failing again and again ------------------------
  let lastStatus = null;

  function problemBanners(s) {
    const out = [];
    if (s.memoryError) out.push(`MEMORY.md cannot be read: ${s.memoryError}`);
    for (const [name, j] of Object.entries(s.jobs || {})) {
      if (j.lastStatus === "failed" && j.consecutiveFailures > 0) {
        const times = j.consecutiveFailures === 1 ? "once" : `${j.consecutiveFailures} times in a row`;
        out.push(`Job ${name} failed ${times}: ${j.lastError || "see the gateway log"}`);
      }
    }
    return out;
  }

  function bar(name, value) {
    const wrap = el("span", "bar");
    wrap.title = `${name} ${value.toFixed(2)}`;
    wrap.dataset.signal = name;
    const fill = el("span", `fill ${name}`);
    fill.style.width = `${Math.round(Math.max(0, Math.min(1, value)) * 100)}%`;
    wrap.appendChild(fill);
    return wrap;
  }

  function renderCandidates(data) {
    const body = $("candidates").tBodies[0];
    body.replaceChildren();
    text($("cand-summary"),
      `${data.qualifying} qualify of ${data.total} · needs score ${Number(data.thresholds.minScore).toFixed(3)}, ` +
      `${data.thresholds.minRecallCount} recalls and ${data.thresholds.minUniqueQueries} different queries`);
    if (!data.candidates.length) {
      emptyRow(body, "no short-term recalls yet: memory searches record them", 5);
      return;
    }
    for (const c of data.candidates) {
      const tr = el("tr", c.qualifies ? "qualifies" : "");
      tr.appendChild(el("td", "snippet", c.snippet));
      tr.appendChild(el("td", "source", `${c.path}:${c.startLine}-${c.endLine}`));
      tr.appendChild(el("td", "num", c.score.toFixed(3)));
      const sig = el("td", "signals");
      for (const name of SIGNALS) sig.appendChild(bar(name, c.components[name] || 0));
      tr.appendChild(sig);
      let gate = "qualifies";
      if (!c.qualifies) {
        const g = c.gates.find((x) => x.name === c.failedGate);
        gate = c.whyNot ? c.whyNot.summary : g ? gateWords(g) : c.failedGate;
      }
      tr.appendChild(el("td", c.qualifies ? "gate ok" : "gate fail", gate));
      body.appendChild(tr);
    }
  }

  // one muted row across a table's columns, for a list with nothing in it yet
  function emptyRow(body, message, columns) {
    const td = el("td", "muted", message);
    td.colSpan = columns;
    body.appendChild(el("tr")).appendChild(td);
  }

  function renderRuns(data) {
    const body = $("runs").tBodies[0];
    body.replaceChildren();
    if (!data.runs.length) {
      emptyRow(body, "no runs yet", 6);
      return;
    }
    for (const r of data.runs) {
      const tr = el("tr", `run ${r.status}`);
      const started = el("td", "when", whenText(r.startedAt));
      started.title = utcTime(r.startedAt);
      tr.appendChild(started);
      tr.appendChild(el("td", "", r.job));
      tr.appendChild(el("td", "", r.trigger));
      tr.appendChild(el("td", `st ${r.status}`, r.status));
      tr.appendChild(el("td", "num", r.durationMs === null ? "–" : `${r.durationMs} ms`));
      tr.appendChild(el("td", "counters", r.error ? r.error : counterText(r.result || {})));
      body.appendChild(tr);
    }
  }

  // -- review queue --------------------------------------------------------------------

  const CHOICE_LABELS = {
    a: "Keep A", b: "Keep B", both: "Keep both", apply: "Apply merge", reject: "Reject",
    skip: "Skip",
  };
  const CHOICE_TITLES = {
    a: "keep A; B leaves MEMORY.md (journaled, undoable)",
    b: "keep B; A leaves MEMORY.md (journaled, undoable)",
    both: "keep both entries as they are; this pair is not proposed again (journaled, undoable)",
    apply: "replace the entries with the combined text (journaled, undoable)",
    reject: "keep the entries apart; this merge is not proposed again",
    skip: "decide later; the item keeps waiting",
  };
  const inFlight = new Set();
  let reviewKey = null;
  let lastReview = { items: [] };

  function entryBox(cls, tag, entry, note) {
    const box = el("div", `entry ${cls}`);
    const head = el("div", "entry-head");
    head.appendChild(el("span", "tag", tag));
    if (note) head.appendChild(el("span", "note", note));
    head.appendChild(el("span", "eid", entry && entry.id ? `[${entry.id}]` : ""));
    box.appendChild(head);
    box.appendChild(el("p", "entry-text", entry ? entry.text : "–"));
    return box;
  }

  function reviewCard(it) {
    const card = el("div", `review-item ${it.kind}`);
    card.dataset.item = String(it.itemId);
    card.dataset.kind = it.kind;
    const head = el("div", "review-head");
    if (it.kind === "conflict") {
      head.appendChild(el("span", "kind", "Conflict"));
      head.appendChild(el("span", "topic", `“${it.topic || ""}”`));
      head.appendChild(el("span", "reason", it.reason || ""));
    } else {
      head.appendChild(el("span", "kind", "Merge"));
      // the library lists a path and its parts; show only details no other one contains
      const all = [...new Set(Object.values(it.missing || {}).flat().map(String))];
      const lost = all.filter((d) => !all.some((o) => o !== d && o.includes(d)));
      head.appendChild(el("span", "reason",
        lost.length ? `would lose without review: ${lost.slice(0, 4).join(", ")}` : "needs a human"));
    }
    head.appendChild(el("span", "when", `#${it.itemId} · queued ${shortTime(it.createdAt)}`));
    card.appendChild(head);
    const body = el("div", "pair");
    if (it.kind === "conflict") {
      body.appendChild(entryBox(it.suggested === "a" ? "suggested" : "", "A", it.a,
        it.suggested === "a" ? "likely winner" : ""));
      body.appendChild(entryBox(it.suggested === "b" ? "suggested" : "", "B", it.b,
        it.suggested === "b" ? "likely winner" : ""));
    } else {
      body.appendChild(entryBox("", "Keeper", it.keeper));
      for (const a of it.absorbed || []) body.appendChild(entryBox("", "Absorbed", a));
      body.appendChild(entryBox("proposed", "Combined text", { text: it.text }));
    }
    card.appendChild(body);
    const actions = el("div", "actions");
    for (const choice of it.choices || []) {
      const b = el("button", `choice ${choice}`, CHOICE_LABELS[choice] || choice);
      b.type = "button";
      b.dataset.choice = choice;
      b.title = CHOICE_TITLES[choice] || "";
      b.disabled = inFlight.has(it.itemId);
      b.addEventListener("click", () => decide(it.itemId, choice));
      actions.appendChild(b);
    }
    card.appendChild(actions);
    return card;
  }

  function renderReview(data) {
    lastReview = data;
    const items = data.items || [];
    text($("review-summary"), items.length ?
      `${items.length} waiting for a decision` : "conflicts and merges that need a human");
    const key = JSON.stringify([items.map((it) => it.itemId), [...inFlight]]);
    if (key === reviewKey) return; // keep the nodes (and a pending click) while nothing changed
    reviewKey = key;
    const box = $("review");
    box.replaceChildren();
    if (!items.length) {
      box.appendChild(el("p", "muted", "Nothing waits for review."));
      return;
    }
    for (const it of items) box.appendChild(reviewCard(it));
  }

  async function decide(itemId, choice) {
    if (inFlight.has(itemId)) return;
    inFlight.add(itemId);
    renderReview(lastReview);
    showStatus(`Resolving item ${itemId}…`, 0);
    try {
      const d = await post("/api/review", { item: itemId, choice });
      showStatus(choice === "skip" ?
        `Item ${itemId} skipped; it keeps waiting` : `Item ${itemId}: ${choice} — ${d.status}`,
        15000);
    } catch (err) {
      showStatus(`Resolving item ${itemId} failed: ${err.message}`, 30000);
    } finally {
      inFlight.delete(itemId);
      reviewKey = null;
    }
    await refresh();
  }

  // -- session dreaming and memory health ------------------------------------------------

  function shortTime(iso) {
    return (iso || "").replace("T", " ").replace(/(:\d{2})?\.\d+Z$/, " UTC").replace(/Z$/, " UTC");
  }

  function describe(x) {
    if (x === null || x === undefined) return "–";
    if (typeof x !== "object") return String(x);
    if (x.session !== undefined && x.reason !== undefined) return `${x.session}: ${x.reason}`;
    if (x.session !== undefined) {
      const range = x.from !== undefined ? ` ${x.from}–${x.to}` : "";
      return `${x.session} (${x.level || "read"}${range})`;
    }
    return Object.entries(x).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`)
      .join(" ");
  }

  const LIST_MAX = 12;
  function list(items, empty) {
    if (!items || !items.length) return el("span", "muted", empty);
    const ul = el("ul", "plain");
    for (const x of items.slice(0, LIST_MAX)) ul.appendChild(el("li", "", describe(x)));
    if (items.length > LIST_MAX) ul.appendChild(el("li", "muted", `… ${items.length - LIST_MAX} more`));
    return ul;
  }

  function kvRow(dl, label, value, cls) {
    dl.appendChild(el("dt", "", label));
    const dd = el("dd", cls || "");
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = value;
    dl.appendChild(dd);
    return dd;
  }

  function renderSessions(st) {
    const box = $("sessions");
    box.replaceChildren();
    if (!st || st.error) {
      text($("sessions-summary"), "");
      box.appendChild(el("p", "bad", `Session dreaming: ${st ? st.error : "no data"}`));
      return;
    }
    const b = st.budget || {};
    text($("sessions-summary"),
      `${st.enabled ? "enabled" : "disabled"} · ${st.sessions} sessions · ` +
      `${(st.candidates || []).length} waiting · tokens today ${b.used ?? 0} of ${b.budget ?? "?"}`);
    if (st.next && st.next.reason) box.appendChild(el("p", "muted next", `Next: ${st.next.reason}`));
    const run = st.lastRun;
    const rep = (run && run.report) || {};
    if (!run) {
      box.appendChild(el("p", "muted", "No session dream has run yet (memcore sessions dream)."));
    } else {
      const dl = el("dl", "kv last-report");
      kvRow(dl, "Last report", `${shortTime(run.startedAt)} · ${run.trigger || "?"}` +
        (rep.model ? ` · model ${rep.model}` : ""));
      kvRow(dl, "Status", run.status, `st ${run.status}`);
      if (run.error || rep.error) kvRow(dl, "Error", run.error || rep.error, "bad");
      kvRow(dl, "Read", list(rep.read, "nothing"), "read");
      kvRow(dl, "Wrote", list(rep.wrote, "nothing"), "wrote");
      kvRow(dl, "Skipped", list(rep.skipped, "nothing"), "skipped");
      const t = rep.tokens || {};
      kvRow(dl, "Tokens",
        `${t.calls ?? 0} calls · ${t.prompt ?? 0} prompt + ${t.completion ?? 0} completion · ` +
        `${t.charged ?? 0} charged` + (t.noUsage ? ` · ${t.noUsage} without usage` : ""),
        "tokens");
      box.appendChild(dl);
    }
    // sessions unreadable now that the last report does not already name as skipped
    const named = new Set((rep.skipped || []).map((x) => x && x.session));
    const unreadable = (st.unreadable || []).filter((u) => !named.has(u.session));
    if (unreadable.length) {
      const p = el("div", "warn");
      p.appendChild(el("span", "", run ? "Unreadable since the last report: " : "Unreadable: "));
      p.appendChild(list(unreadable.map((u) => ({ session: u.session, reason: u.error })), ""));
      box.appendChild(p);
    }
  }

  function renderHealth(h) {
    const box = $("health");
    box.replaceChildren();
    if (!h || h.error) {
      text($("health-summary"), "");
      box.appendChild(el("p", "bad", `Health: ${h ? h.error : "no data"}`));
      return;
    }
    const m = h.memoryMd || {};
    const problems = [];
    if (m.overBudget) problems.push("MEMORY.md over budget");
    if (h.missingLinks.length) problems.push(`${h.missingLinks.length} missing links`);
    if (h.unlinkedTopicFiles.length) problems.push(`${h.unlinkedTopicFiles.length} unlinked files`);
    if (h.unverifiedCount) problems.push(`${h.unverifiedCount} unverified`);
    text($("health-summary"), problems.length ? problems.join(" · ") : "all good");
    const dl = el("dl", "kv");
    const size = el("span", "size");
    const meter = el("span", `meter${m.overBudget ? " over" : ""}`);
    const fill = el("span", "fill");
    fill.style.width = `${Math.min(100, Math.max(0, m.percent || 0))}%`;
    meter.appendChild(fill);
    size.appendChild(meter);
    size.appendChild(el("span", m.overBudget ? "bad" : "",
      ` ${m.chars} of ${m.budgetChars} characters (${m.percent ?? "–"}%)` +
      (m.overBudget ? " — over the load budget" : "")));
    kvRow(dl, "MEMORY.md", size, "memory-size");
    kvRow(dl, "Missing links", list(h.missingLinks, "none"), "missing-links");
    kvRow(dl, "Unlinked topic files", list(h.unlinkedTopicFiles, "none"), "unlinked");
    kvRow(dl, "Never verified",
      `${h.unverifiedCount} entries · hits from ${h.hitsSource}`, "unverified-count");
    box.appendChild(dl);
    const rows = (h.unverifiedEntries || []).slice(0, 10);
    if (rows.length) {
      const table = el("table", "unverified");
      const head = el("tr");
      for (const label of ["Hits", "Entry", "Where"]) head.appendChild(el("th", "", label));
      table.appendChild(el("thead")).appendChild(head);
      const tbody = el("tbody");
      for (const e of rows) {
        const tr = el("tr");
        tr.appendChild(el("td", "num", e.hits === null || e.hits === undefined ? "?" : String(e.hits)));
        tr.appendChild(el("td", "snippet", e.text));
        tr.appendChild(el("td", "source", `${e.section || "–"} · line ${e.line}`));
        tbody.appendChild(tr);
      }
      table.appendChild(tbody);
      box.appendChild(table);
    }
  }

  async function refreshExtra() {
    // each part fails on its own: a broken session store must not hide the review queue
    const [rv, ss] = await Promise.allSettled([getJSON("/api/review"), getJSON("/api/sessions")]);
    if (rv.status === "fulfilled") renderReview(rv.value);
    else text($("review-summary"), `cannot load: ${rv.reason.message}`);
    if (ss.status === "fulfilled") {
      renderSessions(ss.value.status);
      renderHealth(ss.value.health);
    } else {
      text($("sessions-summary"), `cannot load: ${ss.reason.message}`);
    }
  }

  let busy = false;
  let again = false;
  // -- charts: the recall store and MEMORY.md over time, and a run timeline per job -----------
  const SVG = "http://www.w3.org/2000/svg";
  let chartsAt = 0;

  function svgEl(tag, attrs, content) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (content !== undefined) e.textContent = content;
    return e;
  }

  function chartBox(title, legend) {
    const box = el("div", "chart");
    box.appendChild(el("h3", "", title));
    if (legend) box.appendChild(el("div", "legend", legend));
    return box;
  }

  // one or more series of [time, value] as lines over a shared time axis
  function lineChart(title, series, legend) {
    const W = 320, H = 120, L = 34, B = 16;
    const box = chartBox(title, legend);
    const pts = series.flatMap((s) => s.points);
    if (pts.length < 1) { box.appendChild(el("p", "muted", "no data yet")); return box; }
    const t0 = Math.min(...pts.map((p) => p[0])), t1 = Math.max(...pts.map((p) => p[0]));
    const vmax = Math.max(1, ...pts.map((p) => p[1]));
    const x = (t) => L + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * (W - L - 6);
    const y = (v) => H - B - (v / vmax) * (H - B - 8);
    const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title });
    svg.appendChild(svgEl("line", { x1: L, y1: H - B, x2: W - 4, y2: H - B, class: "axis" }));
    svg.appendChild(svgEl("text", { x: 2, y: 12 }, String(vmax)));
    svg.appendChild(svgEl("text", { x: 2, y: H - B }, "0"));
    svg.appendChild(svgEl("text", { x: L, y: H - 3 }, whenText(new Date(t0).toISOString())));
    for (const s of series) {
      if (!s.points.length) continue;
      if (s.bars) {
        for (const [t, v] of s.points) {
          const r = svgEl("rect", { x: x(t) - 2, y: y(v), width: 4, height: H - B - y(v), fill: s.color });
          r.appendChild(svgEl("title", {}, `${s.name} ${v} · ${whenText(new Date(t).toISOString())}`));
          svg.appendChild(r);
        }
        continue;
      }
      const d = s.points.map(([t, v], i) => `${i ? "L" : "M"}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
      svg.appendChild(svgEl("path", { d, class: "line", stroke: s.color }));
      for (const [t, v] of s.points) {
        const c = svgEl("circle", { cx: x(t), cy: y(v), r: 2.5, fill: s.color });
        c.appendChild(svgEl("title", {}, `${s.name} ${v} · ${whenText(new Date(t).toISOString())}`));
        svg.appendChild(c);
      }
    }
    box.appendChild(svg);
    return box;
  }

  const STATUS_COLOR = { ok: "#2e8b57", failed: "#c0392b", skipped: "#6b7480",
    interrupted: "#b7791f", running: "#4a5bd4" };

  function timelineChart(runs) {
    const box = chartBox("Runs per job", "each mark a run: green ok, red failed, grey skipped, amber interrupted");
    if (!runs.length) { box.appendChild(el("p", "muted", "no runs yet")); return box; }
    const jobs = [...new Set(runs.map((r) => r.job))].sort();
    const W = 320, L = 78, row = 18, H = jobs.length * row + 18;
    const ts = runs.map((r) => Date.parse(r.startedAt)).filter((t) => !Number.isNaN(t));
    const t0 = Math.min(...ts), t1 = Math.max(...ts);
    const x = (t) => L + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * (W - L - 8);
    const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "Runs per job" });
    jobs.forEach((job, i) => {
      const yy = 8 + i * row;
      svg.appendChild(svgEl("text", { x: 2, y: yy + 10 }, job));
      svg.appendChild(svgEl("line", { x1: L, y1: yy + 7, x2: W - 4, y2: yy + 7, class: "axis" }));
    });
    for (const r of runs) {
      const t = Date.parse(r.startedAt);
      if (Number.isNaN(t)) continue;
      const yy = 8 + jobs.indexOf(r.job) * row;
      const mark = svgEl("rect", { x: x(t) - 3, y: yy + 1, width: 6, height: 12, rx: 2,
        fill: STATUS_COLOR[r.status] || "#6b7480", class: `run-mark ${r.status}` });
      mark.appendChild(svgEl("title", {}, `${r.job} ${r.status} · ${r.trigger} · ` +
        `${whenText(r.startedAt)} · ${r.durationMs ?? "?"} ms${r.error ? ` · ${r.error}` : ""}`));
      svg.appendChild(mark);
    }
    svg.appendChild(svgEl("text", { x: L, y: H - 2 }, whenText(new Date(t0).toISOString())));
    box.appendChild(svg);
    return box;
  }

  function renderCharts(runs) {
    const ordered = runs.slice().reverse();  // oldest first
    const sized = ordered.filter((r) => r.sizes);
    const at = (r) => Date.parse(r.finishedAt || r.startedAt);
    const series = (key) => sized.map((r) => [at(r), Number(r.sizes[key] || 0)]);
    const now = Date.now();
    const store = series("storeEntries"), memory = series("memoryEntries");
    if (lastStatus) {  // the figures now as the last point
      store.push([now, (lastStatus.shortTermCount || 0) + (lastStatus.promotedTotal || 0)]);
      memory.push([now, lastStatus.longTermCount || 0]);
    }
    const promoted = ordered.filter((r) => r.result && typeof r.result.promoted === "number")
      .map((r) => [at(r), r.result.promoted]);
    const box = $("charts");
    box.replaceChildren(
      lineChart("Recall store and MEMORY.md", [
        { name: "recall store entries", points: store, color: "#4a5bd4" },
        { name: "MEMORY.md entries", points: memory, color: "#2e8b57" },
      ], "blue: recall store entries · green: MEMORY.md entries"),
      lineChart("Promoted per run", [{ name: "promoted", points: promoted, color: "#8e44ad", bars: true }]),
      timelineChart(ordered),
    );
    text($("charts-summary"), `${runs.length} recent runs`);
  }

  async function refreshCharts() {
    if (Date.now() - chartsAt < 15000) return;  // the history changes slowly
    chartsAt = Date.now();
    try {
      renderCharts((await getJSON("/api/runs?limit=200")).runs);
    } catch (err) {
      text($("charts-summary"), `cannot draw: ${err.message}`);
    }
  }

  async function refresh() {
    if (busy) {
      again = true; // an action finished during a poll: poll once more right after
      return;
    }
    busy = true;
    try {
      const [s, c, r] = await Promise.all([
        getJSON("/api/status"), getJSON("/api/candidates"), getJSON("/api/runs?limit=10"),
        refreshExtra(),
      ]);
      renderStatus(s);
      renderCandidates(c);
      renderRuns(r);
      refreshCharts();
      text($("updated"), `updated ${new Date().toLocaleTimeString()}`);
      document.body.dataset.loaded = "1";
    } catch (err) {
      showAlert([`Cannot reach the gateway: ${err.message}`]);
    } finally {
      busy = false;
    }
    if (again) {
      again = false;
      await refresh();
    }
  }

  // -- status messages that clear ------------------------------------------------------------
  let statusTimer = null;

  function showStatus(message, clearAfterMs) {
    text($("action-status"), message);
    if (statusTimer) clearTimeout(statusTimer);
    statusTimer = clearAfterMs ? setTimeout(() => text($("action-status"), ""), clearAfterMs) : null;
  }

  async function act(label, fn) {
    showStatus(`${label}…`, 0);
    try {
      const msg = await fn();
      showStatus(msg, 15000);
    } catch (err) {
      showStatus(`${label} failed: ${err.message}`, 30000);
    }
    chartsAt = 0;  // a run just ended: draw it
    await refresh();
  }

  function init() {
    $("workspace-select").addEventListener("change", (e) => {
      location.search = `?workspace=${encodeURIComponent(e.target.value)}`;
    });
    $("dream-now").addEventListener("click", () => act("Dreaming", async () => {
      $("dream-now").disabled = true;
      const d = await post("/api/memories/dream", {});
      return `Dreamed in ${d.durationMs} ms: promoted ${d.promoted}, merged ${d.merged}, ` +
        `decayed ${d.decayed}, forgotten ${d.forgotten}, remaining ${d.remaining}`;
    }));
    document.querySelectorAll("button.mode").forEach((b) => b.addEventListener("click", () =>
      act("Switching mode", async () => {
        const d = await post("/api/commands", { text: `/dreaming ${b.dataset.mode}` });
        // the first line, and any warning that the mode would promote nothing now
        return d.reply.split("\n").filter((l, i) => i === 0 || l.startsWith("Warning:"))
          .join(" ");
      })));
    $("token-save").addEventListener("click", () => {
      const value = $("token-input").value.trim();
      if (!value) return;
      localStorage.setItem(TOKEN_KEY, value);
      $("token-input").value = "";
      text($("token-note"), "");
      $("token-bar").hidden = true;
      refresh();
    });
    if (!token()) askToken(readToken ? "This gateway needs its token to show memory text." : "");
    if (!/^#memory/.test(location.hash)) refresh();
    setInterval(() => { if (!document.hidden && !memoryShown()) refresh(); }, POLL_MS);
  }

  const memoryShown = () => document.body.dataset.view === "memory";

  // what the Memory view and the session jobs (memory.js, jobs.js) share with this script
  window.memcorePage = {
    getJSON, post, el, text, emptyRow, whenText, utcTime, relative, showAlert, askToken, refresh,
  };

  init();
})();
