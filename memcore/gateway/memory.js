// The Memory view: projects → sessions → a session's short memory and versions → sources → the
// messages, read from GET /api/recall (what `memcore recall --json` prints). Each level keeps
// its page, search and scroll position, so Escape (or a breadcrumb) goes back to where you were.
"use strict";
(function () {
  const P = window.memcorePage;
  if (!P) return;
  const { el, text } = P;
  const $ = (id) => document.getElementById(id);
  const LIST_LIMIT = 50;

  // one entry per level: {kind, args, title, pages: [cursor...], page, query, data, scroll}
  const stack = [];
  let shown = null;  // the level whose data is on screen
  let seq = 0;       // answers of superseded requests are dropped

  function recall(args) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(args)) {
      if (v !== null && v !== undefined && v !== "") qs.set(k, String(v));
    }
    return P.getJSON(`/api/recall?${qs}`);
  }

  // "Sources of v3 (session 2026-11-20-…)": the version first, so a short crumb still says it
  function sourcesTitle(ref) {
    const m = /^(?:(session|project):(.+)|global)@v(\d+)$/.exec(ref);
    return m ? `Sources of v${m[3]} (${m[1] ? `${m[1]} ${m[2]}` : "global"})` : `Sources of ${ref}`;
  }

  function level(kind, args, title) {
    return { kind, args, title, pages: [""], page: 0, query: "", data: null, scroll: 0 };
  }

  // -- switching views ---------------------------------------------------------------------

  function showView(view) {
    const memory = view === "memory";
    document.body.dataset.view = view;
    document.documentElement.dataset.view = view;  // boot.js set it before the first frame
    $("dreams-view").hidden = memory;
    $("memory-view").hidden = !memory;
    for (const b of document.querySelectorAll(".view-tab")) {
      b.setAttribute("aria-pressed", String(b.dataset.view === view));
    }
    const hash = memory ? "#memory" : "";
    if (location.hash !== hash) history.replaceState(null, "", location.pathname + location.search + hash);
    if (memory && !stack.length) openHome();
    if (!memory) P.refresh();
  }

  // the current workspace's project first; the projects list is the level above it
  function openHome() {
    stack.length = 0;
    stack.push(level("projects", {}, "Projects"));
    stack.push(level("project", {}, "This project"));
    render();
  }

  // -- loading and drawing a level ------------------------------------------------------------

  async function load(lv) {
    const cursor = lv.pages[lv.page] || null;
    const a = lv.args;
    if (lv.kind === "projects") {
      const [projects, global] = await Promise.all([
        recall({ memory: "projects", cursor, limit: LIST_LIMIT }),
        recall({ memory: "global" }),
      ]);
      return { list: projects, global };
    }
    if (lv.kind === "project") {
      const [sessions, project] = await Promise.all([
        recall({ memory: "sessions", project: a.project, cursor, limit: LIST_LIMIT, query: lv.query }),
        lv.data && lv.data.project ? Promise.resolve(lv.data.project) :
          recall({ memory: "project", project: a.project }),
      ]);
      return { list: sessions, project };
    }
    if (lv.kind === "session") {
      return { list: await recall({ memory: "session", session: a.session, project: a.project, cursor }) };
    }
    if (lv.kind === "decisions") {
      return { list: await recall({ memory: "decisions", project: a.project, session: a.session, cursor }) };
    }
    if (lv.kind === "sources") {
      return { list: await recall({ memory: "sources", reference: a.reference, project: a.project, cursor }) };
    }
    // messages: pages are appended in the reading pane, not replaced
    const more = await recall({ memory: "sources", reference: a.reference, project: a.project, cursor });
    const items = lv.page > 0 && lv.data ? [...lv.data.list.items, ...more.items] : more.items;
    return { list: { ...more, items } };
  }

  async function render(keepScroll) {
    const lv = stack[stack.length - 1];
    const mine = ++seq;
    drawCrumbs();
    $("mem-search").hidden = lv.kind !== "project";
    if (lv.kind === "project" && $("mem-query").value !== lv.query) $("mem-query").value = lv.query;
    if (!lv.data || lv.stale) {
      if (!lv.data) $("mem-body").replaceChildren(el("p", "muted", "loading…"));
      try {
        lv.data = await load(lv);
        lv.stale = false;
      } catch (err) {
        if (mine !== seq) return;
        $("mem-body").replaceChildren(el("p", "bad", `Cannot read memory: ${err.message}`));
        $("mem-pager").hidden = true;
        return;
      }
      if (mine !== seq) return;
    }
    $("mem-body").classList.toggle("restored", Boolean(keepScroll));
    draw(lv);
    shown = lv;
    window.scrollTo(0, keepScroll ? lv.scroll : 0);
    document.body.dataset.memoryLoaded = String(mine);
  }

  function draw(lv) {
    const body = $("mem-body");
    body.replaceChildren();
    body.dataset.level = lv.kind;
    const d = lv.data;
    if (lv.kind === "projects") drawProjects(body, d);
    else if (lv.kind === "project") drawProject(body, lv, d);
    else if (lv.kind === "decisions") drawDecisions(body, lv, d.list);
    else if (lv.kind === "session") drawSession(body, lv, d.list);
    else if (lv.kind === "sources") drawSources(body, lv, d.list);
    else drawMessages(body, lv, d.list);
    drawPager(lv, d.list);
  }

  function memoryCard(title, cur, reference, project, extra) {
    const card = el("div", "card mem-card");
    const head = el("div", "mem-head");
    head.appendChild(el("strong", "", title));
    if (cur && cur.createdAt) head.appendChild(el("span", "muted", `${cur.ref} · ${P.whenText(cur.createdAt)}`));
    if (extra) head.appendChild(el("span", "muted", extra));
    card.appendChild(head);
    card.appendChild(el("p", "mem-text", cur ? cur.text : "(no short memory yet)"));
    if (cur && reference !== false) {
      card.appendChild(button("View sources", "view-sources", () =>
        open("sources", { reference: cur.ref, project }, sourcesTitle(cur.ref))));
    }
    return card;
  }

  // the library cuts previews at a fixed length (160 characters, 200 for sources): say so
  const clip = (s, cut = 160) => (s.length >= cut ? `${s}…` : s);

  function button(label, cls, fn) {
    const b = el("button", cls, label);
    b.type = "button";
    b.addEventListener("click", fn);
    return b;
  }

  function row(cls, title, meta, preview, fn) {
    const item = el("li", `mem-item ${cls || ""}`);
    const link = button(title, "mem-open", fn);
    item.appendChild(link);
    if (meta) item.appendChild(el("span", "mem-meta muted", meta));
    if (preview) item.appendChild(el("p", "mem-preview", clip(preview)));
    return item;
  }

  function drawProjects(body, d) {
    body.appendChild(memoryCard("Global memory", d.global.current, true, null,
      "across every project of this user"));
    body.appendChild(el("h3", "", `Projects (${d.list.total})`));
    const ul = el("ul", "mem-list");
    for (const it of d.list.items) {
      const name = `${it.name || it.project}${it.current ? " (this workspace)" : ""}`;
      ul.appendChild(row(it.current ? "current" : "", name, it.project, it.preview || "no project memory yet",
        () => open("project", { project: it.current ? undefined : it.project }, it.name || it.project)));
    }
    body.appendChild(ul);
  }

  function drawProject(body, lv, d) {
    const cur = d.project.current;
    const pid = d.list.project;
    lv.args.projectId = pid;
    body.appendChild(memoryCard(`Project memory · ${pid}`, cur, true, lv.args.project,
      `${d.project.versions} version${d.project.versions === 1 ? "" : "s"}`));
    body.appendChild(button("Decisions", "open-decisions", () =>
      open("decisions", { project: lv.args.project }, "Decisions")));
    const total = d.list.total;
    body.appendChild(el("h3", "", lv.query ? `Sessions matching “${lv.query}” (${total})` : `Sessions (${total})`));
    if (!d.list.items.length) {
      body.appendChild(el("p", "muted", lv.query ? "No session matches." : "No session yet."));
      return;
    }
    const ul = el("ul", "mem-list sessions");
    for (const it of d.list.items) {
      const flags = [it.independent ? "independent" : "", it.status !== "ok" ? it.status : ""].filter(Boolean);
      const meta = [it.lastActivity ? P.whenText(it.lastActivity) : "", `${it.messages} messages`, ...flags]
        .filter(Boolean).join(" · ");
      const item = row(it.independent ? "independent" : "", it.title || it.session, meta,
        it.preview || "no short memory yet",
        () => open("session", { session: it.session, project: lv.args.project }, it.title || it.session));
      item.dataset.session = it.session;
      ul.appendChild(item);
    }
    body.appendChild(ul);
  }

  function drawSession(body, lv, d) {
    const facts = [`${d.messages} messages`, d.status !== "ok" ? d.status : "",
      d.independent ? "independent: its memory stays in this session" : ""].filter(Boolean).join(" · ");
    body.appendChild(memoryCard(`Session ${d.session}`, d.current, true, lv.args.project, facts));
    for (const key of ["attachments", "decisions"]) {  // shown when the library gives them
      const xs = (d.current && d.current[key]) || d[key];
      if (Array.isArray(xs) && xs.length) body.appendChild(extraList(key, xs));
    }
    body.appendChild(button("Decisions in this session", "open-decisions", () =>
      open("decisions", { project: lv.args.project, session: d.session }, "Decisions")));
    body.appendChild(el("h3", "", "Versions (immutable)"));
    const ul = el("ul", "mem-list versions");
    for (const v of d.versions || []) {
      ul.appendChild(row("", v.ref, `${P.whenText(v.createdAt)} · messages ${v.messages.join(", ") || "–"}`,
        "", () => open("sources", { reference: v.ref, project: lv.args.project }, sourcesTitle(v.ref))));
    }
    body.appendChild(ul);
  }

  function attachmentText(a) {
    if (typeof a === "string") return a;
    return [a.name, a.type || a.mediaType, a.size !== undefined && a.size !== null ? `${a.size} bytes` : "",
      a.location || a.path || a.url].filter(Boolean).join(" · ");
  }

  // how the messages a source covers read in the transcript now (same, moved, changed, gone)
  function sourceStates(s) {
    const counts = {};
    for (const m of s.messages || []) {
      const state = (m && (m.state || m.status)) || "";
      if (state) counts[state] = (counts[state] || 0) + 1;
    }
    const parts = Object.entries(counts).filter(([k]) => k !== "same").map(([k, n]) => `${n} ${k}`);
    return parts.length ? `since then: ${parts.join(", ")}` : "";
  }

  function extraList(key, xs) {
    const box = el("div", `card mem-${key}`);
    box.appendChild(el("strong", "", key === "decisions" ? "Decisions" : "Attachments"));
    const ul = el("ul", "plain");
    for (const x of xs) {
      const where = key === "attachments" && typeof x.message === "number" ? ` · message #${x.message}` : "";
      ul.appendChild(el("li", "", typeof x === "string" ? x :
        x.quote || x.text || `${attachmentText(x)}${where}`));
    }
    box.appendChild(ul);
    return box;
  }

  // decision records: the user's own words, each with the messages it was said in
  function drawDecisions(body, lv, d) {
    body.appendChild(el("h3", "", `Decisions (${d.total})${d.session ? ` of session ${d.session}` : ""}`));
    for (const w of d.withheld || []) {
      body.appendChild(el("p", "muted", `${w.decisions} withheld: session ${w.session} is ${w.why}`));
    }
    if (!d.items.length) body.appendChild(el("p", "muted", "No decision recorded."));
    const ul = el("ul", "mem-list decisions");
    for (const x of d.items) {
      const first = (x.messages || [])[0];
      const meta = [x.session, x.ts ? P.whenText(x.ts) : "", x.foundBy].filter(Boolean).join(" · ");
      // a decision names its messages within its session (@offset:hash or a uuid)
      const msgRef = first && first.ref &&
        (first.ref.startsWith("session:") ? first.ref : `session:${x.session}#${first.ref}`);
      const go = msgRef ?
        () => open("messages", { reference: msgRef, project: lv.args.project }, "Messages") :
        () => open("session", { session: x.session, project: lv.args.project }, x.session);
      const item = row("decision", x.quote, meta, "", go);
      item.dataset.decision = String(x.id);
      ul.appendChild(item);
    }
    body.appendChild(ul);
  }

  function drawSources(body, lv, d) {
    body.appendChild(memoryCard(`Text of ${d.reference}`, { ref: d.reference, text: d.text }, false,
      null, "made from the sources below"));
    body.appendChild(el("h3", "", `Sources (${d.total})`));
    const ul = el("ul", "mem-list sources");
    for (const s of d.items) {
      const range = s.from !== null && s.from !== undefined ? `messages ${s.from}–${s.to}` : "";
      const isMessages = s.kind === "messages" || s.kind === "raw";
      // a project memory's sources are its sessions' memories: they live in that project
      const owner = /^project:(.+)@v\d+$/.exec(d.reference);
      const project = owner ? owner[1] : lv.args.project;
      const meta = [s.kind, range, sourceStates(s)].filter(Boolean).join(" · ");
      const go = isMessages ? () => open("messages", { reference: s.ref, project }, `Messages ${s.ref.replace(/^.*#/, "")}`) :
        /@v\d+$/.test(s.ref) ? () => open("sources", { reference: s.ref, project }, sourcesTitle(s.ref)) :
          null;
      const item = go ? row(`source ${s.kind}`, s.ref, meta, "", go) : el("li", "mem-item");
      if (go) item.appendChild(el("p", "mem-preview", clip(s.preview || "", 200)));
      if (!go) {
        item.appendChild(el("span", "mem-ref", s.ref));
        item.appendChild(el("span", "mem-meta muted", meta));
        item.appendChild(el("p", "mem-preview", clip(s.preview || "", 200)));
      }
      ul.appendChild(item);
    }
    body.appendChild(ul);
  }

  function drawMessages(body, lv, d) {
    const pane = el("div", "reader");
    pane.setAttribute("role", "document");
    pane.appendChild(el("p", "muted", `${d.session} · messages ${d.from}–${d.to} · ${d.note || ""}`));
    for (const m of d.items) {
      const msg = el("div", `msg ${m.role}`);
      msg.dataset.index = String(m.index);
      const head = el("div", "msg-head");
      head.appendChild(el("strong", "", `#${m.index} ${m.role}`));
      if (m.ts) head.appendChild(el("span", "muted", P.whenText(m.ts)));
      if (m.offset) head.appendChild(el("span", "muted", `continued from character ${m.offset}`));
      msg.appendChild(head);
      msg.appendChild(el("p", "msg-text", m.text));
      for (const a of m.attachments || []) {  // a reference to the file, never its content
        msg.appendChild(el("p", "attachment muted", `attachment: ${attachmentText(a)}`));
      }
      pane.appendChild(msg);
    }
    if (d.nextCursor) {
      pane.appendChild(button("Read on", "read-on", () => {
        lv.pages.push(d.nextCursor);
        lv.page += 1;
        lv.stale = true;
        lv.scroll = window.scrollY;
        render(true);
      }));
    }
    body.appendChild(pane);
  }

  function drawPager(lv, d) {
    const paged = ["projects", "project", "session", "sources", "decisions"].includes(lv.kind);
    const pager = $("mem-pager");
    pager.hidden = !paged || (lv.page === 0 && !d.nextCursor);
    if (pager.hidden) return;
    $("mem-prev").disabled = lv.page === 0;
    $("mem-next").disabled = !d.nextCursor;
    const total = d.total !== undefined ? ` of ${Math.ceil(d.total / LIST_LIMIT) || 1}` : "";
    text($("mem-page"), `page ${lv.page + 1}${lv.kind === "project" || lv.kind === "projects" ? total : ""}`);
    pager.dataset.next = d.nextCursor || "";
  }

  function drawCrumbs() {
    const nav = $("mem-crumbs");
    nav.replaceChildren();
    stack.forEach((lv, i) => {
      if (i) nav.appendChild(el("span", "sep", "›"));
      const last = i === stack.length - 1;
      const short = lv.title.length > 28 ? `${lv.title.slice(0, 26)}…` : lv.title;
      const b = el(last ? "span" : "button", last ? "crumb here" : "crumb", short);
      b.title = lv.title;
      if (!last) {
        b.type = "button";
        b.addEventListener("click", () => back(stack.length - 1 - i));
      }
      nav.appendChild(b);
    });
  }

  // -- moving ---------------------------------------------------------------------------------

  function open(kind, args, title) {
    const cur = stack[stack.length - 1];
    if (cur) cur.scroll = window.scrollY;
    stack.push(level(kind, args, title));
    render();
  }

  function back(levels) {
    if (stack.length <= 1 || levels <= 0) return false;
    stack.splice(Math.max(1, stack.length - levels));
    render(true);
    return true;
  }

  function page(delta) {
    const lv = stack[stack.length - 1];
    if (delta > 0) {
      const next = lv.data && lv.data.list.nextCursor;
      if (!next) return;
      lv.pages = lv.pages.slice(0, lv.page + 1).concat([next]);
      lv.page += 1;
    } else {
      if (lv.page === 0) return;
      lv.page -= 1;
    }
    lv.stale = true;
    render();
  }

  async function currentSession() {
    try {
      const d = await recall({ memory: "sessions", limit: 1 });
      if (!d.items.length) { P.showAlert(["No session in this workspace yet."]); return; }
      const it = d.items[0];
      if (document.body.dataset.view !== "memory") showView("memory");
      stack.length = 0;
      stack.push(level("projects", {}, "Projects"), level("project", {}, "This project"));
      open("session", { session: it.session }, it.title || it.session);
    } catch (err) {
      P.showAlert([`Cannot read memory: ${err.message}`]);
    }
  }

  let searchTimer = null;
  function search() {
    const lv = stack[stack.length - 1];
    if (lv.kind !== "project") return;
    const value = $("mem-query").value.trim();
    if (value === lv.query) return;
    lv.query = value;
    lv.pages = [""];
    lv.page = 0;
    lv.stale = true;
    render();
  }

  function init() {
    for (const b of document.querySelectorAll(".view-tab")) {
      b.addEventListener("click", () => showView(b.dataset.view));
    }
    $("mem-prev").addEventListener("click", () => page(-1));
    $("mem-next").addEventListener("click", () => page(1));
    $("mem-current").addEventListener("click", currentSession);
    $("mem-query").addEventListener("input", () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(search, 250);
    });
    $("mem-query").addEventListener("keydown", (e) => {
      if (e.key === "Enter") { clearTimeout(searchTimer); search(); }
    });
    document.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || document.body.dataset.view !== "memory") return;
      const input = $("mem-query");
      if (document.activeElement === input && input.value) {
        input.value = "";  // the first Escape clears the search, the next goes back
        clearTimeout(searchTimer);
        search();
        return;
      }
      if (back(1)) e.preventDefault();
    });
    $("token-save").addEventListener("click", () => {  // a token given: read again
      const lv = stack[stack.length - 1];
      if (!lv || document.body.dataset.view !== "memory") return;
      lv.stale = true;
      render(true);
    });
    if (/^#memory/.test(location.hash)) showView("memory");
  }

  init();
})();
