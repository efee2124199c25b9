// Runs before the page is drawn (first in <head>; the page inlines its files, each allowed
// by its hash in the CSP). Opened on /#memory, the page shows the Memory view from its first
// frame: the Dreams view is never styled nor laid out first, and the Memory view's first two
// requests go out now, while the rest of the page is parsed, instead of after its scripts
// ran. dreams.js takes their answers (window.memcoreEarly: URL -> the fetch's promise, each
// taken once) when the Memory view asks for the same URL; any other request is sent as usual.
"use strict";
(function () {
  if (!/^#memory/.test(location.hash)) return;
  document.documentElement.dataset.view = "memory";
  const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || "";
  const workspace = encodeURIComponent(meta("memcore-workspace"));
  const token = meta("memcore-token") || localStorage.getItem("memcore-token") || "";
  const headers = { Accept: "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) };
  // what memory.js asks first for this workspace's project (its LIST_LIMIT is 50)
  const first = ["/api/recall?memory=sessions&limit=50", "/api/recall?memory=project"];
  const early = new Map();
  for (const path of first) {
    const url = `${path}&workspace=${workspace}`;
    const res = fetch(url, { headers });
    res.catch(() => {});  // a failure is reported by whoever takes the answer
    early.set(url, res);
  }
  window.memcoreEarly = early;
})();
