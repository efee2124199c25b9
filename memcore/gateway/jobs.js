// Session jobs on the Dreams page: the session dreams (GET /api/sessions/jobs) with scope,
// progress, tokens and failure reason; stop / continue / retry (POST /api/sessions/jobs, with
// the token); today's use of the token budget, whose day is the UTC date, in local time and UTC.
"use strict";
(function () {
  const P = window.memcorePage;
  if (!P) return;
  const { el, text } = P;
  const $ = (id) => document.getElementById(id);
  const POLL_MS = 3000;
  const busy = new Set();  // job ids with an action in flight

  const p2 = (n) => String(n).padStart(2, "0");
  function localClock(iso) {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? "?" : `${p2(d.getHours())}:${p2(d.getMinutes())}`;
  }
  function localDay(iso) {
    const d = new Date(iso);
    return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}`;
  }
  const fmt = (n) => Number(n || 0).toLocaleString("en-US");

  function renderUsage(u) {
    const box = $("usage");
    box.replaceChildren();
    const pct = u.budget ? Math.min(100, Math.round((u.used / u.budget) * 100)) : 100;
    const line = el("div", "usage-line");
    const meter = el("span", `meter${u.used >= u.budget ? " over" : ""}`);
    const fill = el("span", "fill");
    fill.style.width = `${pct}%`;
    meter.appendChild(fill);
    line.appendChild(meter);
    line.appendChild(el("span", "usage-figure",
      ` ${fmt(u.used)} of ${fmt(u.budget)} tokens today (${pct}%)` +
      (u.reservedOpen ? ` · ${fmt(u.reservedOpen)} reserved, unsettled` : "") +
      (u.ledgerLost ? " · the ledger was lost with a corrupt database: today counts as spent" : "")));
    box.appendChild(line);
    const start = u.dayStartsAt, end = u.resetsAt;
    const sameDay = localDay(start) === localDay(end) ? "" : ` ${localDay(end)}`;
    const day = el("p", "usage-day muted",
      `Budget day ${u.day} (UTC): 00:00–24:00 UTC, which is ${localDay(start)} ${localClock(start)}` +
      ` – ${sameDay.trim() || localDay(end)} ${localClock(end)} local time · resets ${P.relative(end)}` +
      ` at ${localClock(end)} local (00:00 UTC) · shared by every workspace of this user`);
    day.title = `${P.utcTime(start)} – ${P.utcTime(end)}`;
    box.appendChild(day);
    text($("jobs-summary"), `tokens today ${fmt(u.used)} of ${fmt(u.budget)}`);
  }

  function scopeText(scope) {
    if (scope && scope.session) return `session ${scope.session}`;
    if (scope && scope.project) return `project ${scope.project}`;
    return "all sessions";
  }

  function progressCell(j) {
    const td = el("td", "progress");
    const p = j.progress || {};
    if (p.total === undefined) { td.textContent = "–"; return td; }
    const label = j.status === "ok" ? `${p.done} sources read` : `${p.step || ""} ${p.done}/${p.total}`;
    if (j.status === "running" && p.total) {
      const meter = el("span", "meter");
      const fill = el("span", "fill");
      fill.style.width = `${Math.round((p.done / p.total) * 100)}%`;
      meter.appendChild(fill);
      td.appendChild(meter);
      td.appendChild(document.createTextNode(" "));
    }
    td.appendChild(el("span", "", `${label.trim()} · ${j.calls} calls`));
    return td;
  }

  const ACTIONS = { running: ["stop", "Stop"], stopped: ["continue", "Continue"] };

  function actionButton(j) {
    const [action, label] = ACTIONS[j.status] || (j.status === "ok" ? [] : ["retry", "Retry"]);
    const td = el("td", "actions");
    if (!action) return td;
    const b = el("button", `job-action ${action}`, label);
    b.type = "button";
    b.dataset.action = action;
    b.disabled = busy.has(j.id) || (action === "stop" && Boolean(j.stopRequested));
    b.title = action === "stop" ? "stops at its next checkpoint; what it finished is kept" :
      "runs this job's scope again, from the saved progress";
    b.addEventListener("click", () => act(action, j));
    td.appendChild(b);
    return td;
  }

  function renderJobs(data) {
    renderUsage(data.usage);
    const body = $("jobs").tBodies[0];
    body.replaceChildren();
    $("sessions-dream").disabled = Boolean(data.running) || data.jobs.some((j) => j.status === "running");
    if (!data.jobs.length) {
      P.emptyRow(body, "No session dream has run yet.", 7);
      return;
    }
    for (const j of data.jobs) {
      const tr = el("tr", `job ${j.status}`);
      tr.dataset.job = j.id;
      tr.dataset.status = j.status;
      const started = el("td", "when", P.whenText(j.startedAt));
      started.title = `${P.utcTime(j.startedAt)} · ${j.id} · ${j.trigger || ""}`;
      tr.appendChild(started);
      tr.appendChild(el("td", "scope", scopeText(j.scope)));
      const status = j.status === "running" && j.stopRequested ? "stopping…" : j.status;
      tr.appendChild(el("td", `st ${j.status}`, status));
      tr.appendChild(progressCell(j));
      tr.appendChild(el("td", "num tokens", `${fmt(j.tokens)} tokens`));
      tr.appendChild(el("td", "reason", j.error || ""));
      tr.appendChild(actionButton(j));
      body.appendChild(tr);
    }
  }

  async function refresh() {
    try {
      renderJobs(await P.getJSON("/api/sessions/jobs"));
    } catch (err) {
      text($("jobs-summary"), `cannot load: ${err.message}`);
    }
  }

  async function act(action, j) {
    if (j) busy.add(j.id);
    text($("jobs-status"), `${action}…`);
    try {
      const body = j ? { action, job: j.id } : { action };
      const d = await P.post("/api/sessions/jobs", body);
      text($("jobs-status"), action === "stop" ? `asked ${j.id} to stop; it stops at its next checkpoint` :
        `started a session dream (${scopeText(d.scope)})${d.retryOf ? `, continuing ${d.retryOf}` : ""}`);
    } catch (err) {
      text($("jobs-status"), `${action} failed: ${err.message}`);
    } finally {
      if (j) busy.delete(j.id);
    }
    await refresh();
  }

  $("sessions-dream").addEventListener("click", () => act("start", null));
  if (document.body.dataset.view !== "memory") refresh();
  setInterval(() => {
    if (!document.hidden && document.body.dataset.view !== "memory") refresh();
  }, POLL_MS);
})();
