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

  async function getJSON(path) {
    const sent = token();
    const res = await fetch(q(path), { headers: { Accept: "application/json", ...authHeaders() } });
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
      `${name} ${j.nextRunAt ? utcTime(j.nextRunAt.utc) : "not scheduled"}`).join(" · "));
    text($("promoted"), s.promotedTotal);
    text($("promoted-today"), s.promotedToday);
    const next = s.nextRunAt;
    text($("next-cycle"), next ? localTime(next.local) : "disabled");
    text($("next-cycle-utc"), next ? `${utcTime(next.utc)} · ${next.timezone}` : "mode is off");
    text($("mode"), s.mode);
    $("mode").dataset.modeCurrent = s.mode;
    text($("cadence"), s.enabled ? `${s.cron} (${s.timezone})` : "no schedule");
    document.querySelectorAll("button.mode").forEach((b) => {
      b.classList.toggle("active", b.dataset.mode === s.mode);
      b.setAttribute("aria-pressed", String(b.dataset.mode === s.mode));
    });
    $("dream-now").disabled = Boolean(s.running);
    if (s.running) text($("action-status"), `${s.running} is running…`);
    const alerts = [];
    if (s.configError) alerts.push(`Config error: ${s.configError} (${s.scheduleNote || "defaults in use"})`);
    if (s.workspaceError) alerts.push(`Workspace error: ${s.workspaceError}`);
    if (s.storeHealth && s.storeHealth.error) alerts.push(`Recall store: ${s.storeHealth.error}`);
    showAlert(alerts);
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
      `${data.qualifying} qualify of ${data.total} · minScore ${data.thresholds.minScore}, ` +
      `recalls ≥ ${data.thresholds.minRecallCount}, queries ≥ ${data.thresholds.minUniqueQueries}`);
    if (!data.candidates.length) {
      const tr = el("tr");
      const td = el("td", "muted", "no short-term recalls yet: memory searches record them");
      td.colSpan = 5;
      tr.appendChild(td);
      body.appendChild(tr);
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
        gate = c.whyNot ? c.whyNot.summary
          : g ? `${g.name} ${g.actual} < ${g.required}` : c.failedGate;
      }
      tr.appendChild(el("td", c.qualifies ? "gate ok" : "gate fail", gate));
      body.appendChild(tr);
    }
  }

  function renderRuns(data) {
    const body = $("runs").tBodies[0];
    body.replaceChildren();
    if (!data.runs.length) {
      const tr = el("tr");
      const td = el("td", "muted", "no runs yet");
      td.colSpan = 6;
      tr.appendChild(td);
      body.appendChild(tr);
      return;
    }
    for (const r of data.runs) {
      const tr = el("tr", `run ${r.status}`);
      tr.appendChild(el("td", "", (r.startedAt || "").replace("T", " ").replace(/\.\d+Z$/, "Z")));
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
    a: "Keep A", b: "Keep B", apply: "Apply merge", reject: "Reject", skip: "Skip",
  };
  const CHOICE_TITLES = {
    a: "keep A; B leaves MEMORY.md (journaled, undoable)",
    b: "keep B; A leaves MEMORY.md (journaled, undoable)",
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
    text($("action-status"), `Resolving item ${itemId}…`);
    try {
      const d = await post("/api/review", { item: itemId, choice });
      text($("action-status"), choice === "skip" ?
        `Item ${itemId} skipped; it keeps waiting` : `Item ${itemId}: ${choice} — ${d.status}`);
    } catch (err) {
      text($("action-status"), `Resolving item ${itemId} failed: ${err.message}`);
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

  async function act(label, fn) {
    text($("action-status"), `${label}…`);
    try {
      const msg = await fn();
      text($("action-status"), msg);
    } catch (err) {
      text($("action-status"), `${label} failed: ${err.message}`);
    }
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
    refresh();
    setInterval(() => { if (!document.hidden) refresh(); }, POLL_MS);
  }

  init();
})();
