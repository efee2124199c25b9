// The Dreams page: polls the JSON routes and updates in place; actions POST with the token.
"use strict";
(function () {
  const POLL_MS = 3000;
  const SIGNALS = ["frequency", "relevance", "diversity", "recency"];
  const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || "";
  const workspace = meta("memcore-workspace");
  const $ = (id) => document.getElementById(id);

  function token() {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromHash) {
      sessionStorage.setItem("memcore-token", fromHash);
      history.replaceState(null, "", location.pathname + location.search);
    }
    return meta("memcore-token") || sessionStorage.getItem("memcore-token") || "";
  }

  function q(path) {
    const sep = path.includes("?") ? "&" : "?";
    return `${path}${sep}workspace=${encodeURIComponent(workspace)}`;
  }

  async function getJSON(path) {
    const res = await fetch(q(path), { headers: { Accept: "application/json" } });
    const data = await res.json();
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
  }

  async function post(path, body) {
    const tok = token();
    if (!tok) {
      $("token-bar").hidden = false;
      throw new Error("actions need the gateway token");
    }
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${tok}` },
      body: JSON.stringify({ ...body, workspace }),
    });
    const data = await res.json();
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
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
        gate = g ? `${g.name} ${g.actual} < ${g.required}` : c.failedGate;
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

  let busy = false;
  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const [s, c, r] = await Promise.all([
        getJSON("/api/status"), getJSON("/api/candidates"), getJSON("/api/runs?limit=10"),
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
        return d.reply.split("\n")[0];
      })));
    $("token-save").addEventListener("click", () => {
      sessionStorage.setItem("memcore-token", $("token-input").value.trim());
      $("token-input").value = "";
      $("token-bar").hidden = true;
    });
    if (!token()) $("token-bar").hidden = false;
    refresh();
    setInterval(() => { if (!document.hidden) refresh(); }, POLL_MS);
  }

  init();
})();
