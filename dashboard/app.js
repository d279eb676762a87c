/*
 * The Sluice dashboard: plain JavaScript over the server's REST API (the
 * same requests as curl and the sluice command line), polled every second
 * for the view on screen.  Views: #/ (jobs, their runs and buttons, the
 * bulkbuilder backlog), #/job/NAME (a run's live progress, its workers'
 * counters, the workflow graph, failed documents), #/search.  On a server
 * that asks for the API token (a non-loopback bind), the token is asked
 * for once and kept for the browser tab (sessionStorage).
 */
"use strict";
(() => {
  const POLL_MS = 1000;
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem("sluiceToken") || "";
  let timer = null;
  let generation = 0; /* a newer view stops the older one's refreshes */
  const defs = {}; /* job name -> definition, workflow name -> definition */
  const ended = {}; /* "job/run" -> run data of an ended run (final) */

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  /* ------------------------------------------------------------------
   * Helpers.
   * ---------------------------------------------------------------- */

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  function fill(tbody, rows) {
    tbody.replaceChildren(...rows);
  }

  function fmt(n) {
    return Number(n || 0).toLocaleString("en");
  }

  function bytes(n) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let v = Number(n || 0);
    let i = 0;
    while (v >= 1024 && i < u.length - 1) {
      v /= 1024;
      i++;
    }
    return (i ? v.toFixed(1) : v) + " " + u[i];
  }

  function setConn(ok, why) {
    const c = $("conn");
    c.className = "conn " + (ok ? "ok" : "bad");
    c.textContent = ok ? "connected" : "no answer" + (why ? ": " + why : "");
  }

  function showError(message) {
    const e = $("error");
    e.hidden = !message;
    e.textContent = message || "";
  }

  async function api(method, path) {
    const headers = {};
    if (token) headers.Authorization = "Bearer " + token;
    let r;
    try {
      r = await fetch(path, { method, headers, cache: "no-store" });
    } catch (e) {
      setConn(false, e.message);
      throw e;
    }
    const text = await r.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch (e) {
      body = null;
    }
    if (r.status === 401) {
      askToken();
      throw new ApiError(401, "this server needs its API token");
    }
    setConn(true);
    if (!r.ok) {
      throw new ApiError(r.status, (body && body.error && body.error.message) || r.statusText);
    }
    return body;
  }

  const enc = encodeURIComponent;

  /* Counter @name summed over the run's workers (all actions). */
  function counter(run, name) {
    let sum = 0;
    for (const c of Object.values((run && run.worker) || {})) sum += Number(c[name] || 0);
    return sum;
  }

  /* The newest of a job's ended runs (their ids sort by start time). */
  function last(ids) {
    return ids && ids.length ? ids[ids.length - 1] : undefined;
  }

  function isActive(state) {
    return state && !["SUCCEEDED", "FAILED", "CANCELED"].includes(state);
  }

  /* ------------------------------------------------------------------
   * The token.
   * ---------------------------------------------------------------- */

  function askToken() {
    const f = $("token-form");
    if (!f.hidden) return;
    f.hidden = false;
    $("token-input").focus();
  }

  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("token-input").value;
    sessionStorage.setItem("sluiceToken", token);
    $("token-form").hidden = true;
    route();
  });

  /* ------------------------------------------------------------------
   * Jobs.
   * ---------------------------------------------------------------- */

  async function jobDef(name) {
    if (!defs["job:" + name]) defs["job:" + name] = await api("GET", "/smila/jobmanager/jobs/" + enc(name) + "/");
    return defs["job:" + name];
  }

  async function runData(job, run) {
    const key = job + "/" + run;
    if (ended[key]) return ended[key];
    const d = await api("GET", "/smila/jobmanager/jobs/" + enc(job) + "/" + enc(run) + "/");
    if (!isActive(d.state)) ended[key] = d;
    return d;
  }

  async function act(what, job, run) {
    const base = "/smila/jobmanager/jobs/" + enc(job) + "/";
    try {
      if (what === "start") await api("POST", base);
      else await api("POST", base + enc(run) + "/" + what);
      delete defs["job:" + job];
      showError("");
    } catch (e) {
      showError(what + " " + job + ": " + e.message);
    }
    route();
  }

  function buttons(job, run, state, paused) {
    const b = [];
    if (!isActive(state)) {
      b.push(el("button", { type: "button", "aria-label": "Start " + job, onclick: () => act("start", job) }, "Start"));
    }
    if (state === "RUNNING") {
      b.push(el("button", { type: "button", "aria-label": "Finish " + job, onclick: () => act("finish", job, run) }, "Finish"));
    }
    if (paused) {
      b.push(el("button", { type: "button", "aria-label": "Resume " + job, onclick: () => act("resume", job, run) }, "Resume"));
    } else if (state === "RUNNING" || state === "FINISHING") {
      b.push(el("button", { type: "button", "aria-label": "Pause " + job, onclick: () => act("pause", job, run) }, "Pause"));
    }
    if (isActive(state) && state !== "CANCELING") {
      b.push(el("button", { type: "button", class: "danger", "aria-label": "Cancel " + job, onclick: () => act("cancel", job, run) }, "Cancel"));
    }
    return b;
  }

  function progressText(run) {
    const t = run.tasks || {};
    const done = ["successfulTaskCount", "failedWithoutRetryTaskCount", "failedAfterRetryTaskCount", "obsoleteTaskCount", "cancelledTaskCount"]
      .reduce((s, k) => s + Number(t[k] || 0), 0);
    return "tasks " + fmt(done) + "/" + fmt(t.createdTaskCount) + ", pushed " + fmt(counter(run, "records.pushed")) +
      ", indexed " + fmt(counter(run, "records.indexed"));
  }

  async function refreshJobs(gen) {
    const list = await api("GET", "/smila/jobmanager/jobs/?returnDetails=true");
    const rows = [];
    for (const j of list.jobs || []) {
      const def = await jobDef(j.name);
      const runs = j.runs || {};
      const id = runs.current || last(runs.completed);
      let run = null;
      if (id) {
        try {
          run = await runData(j.name, id);
        } catch (e) {
          run = null;
        }
      }
      const state = run ? run.state : "";
      const paused = !!(runs.current && run && run.paused);
      const next = j.scheduling && j.scheduling.nextStart;
      rows.push(el("tr", {},
        el("td", {}, el("a", { href: "#/job/" + enc(j.name) }, j.name)),
        el("td", {}, def.workflow || "",
          next ? el("div", { class: "muted" }, "next start " + next.replace("T", " ").replace(/\.\d+Z$/, " UTC")) : null),
        el("td", {}, run ? el("span", { class: "state " + state }, state + (paused ? ", paused" : "")) : el("span", { class: "muted" }, "never run"),
          run ? el("div", { class: "muted" }, (runs.current ? "current " : "last ") + id) : null),
        el("td", {}, run ? progressText(run) : ""),
        el("td", {}, ...buttons(j.name, runs.current, runs.current ? state : "", paused))));
    }
    if (gen !== generation) return;
    fill($("jobs-table").tBodies[0], rows);
    const bb = await api("GET", "/smila/bulkbuilder/");
    if (gen !== generation) return;
    fill($("bb-table").tBodies[0], (bb.jobs || []).map((b) => el("tr", {},
      el("td", {}, b.job), el("td", { class: "num" }, fmt(b.openRecords)), el("td", { class: "num" }, bytes(b.openBytes)),
      el("td", { class: "num" }, fmt(b.pendingBulks)), el("td", { class: "num" }, fmt(b.acceptedRecords)),
      el("td", { class: "num" }, fmt(b.committedBulks)))));
  }

  /* ------------------------------------------------------------------
   * One job: progress, workers, workflow graph, failed documents.
   * ---------------------------------------------------------------- */

  function dlist(pairs) {
    const d = el("dl");
    for (const [k, v] of pairs) d.append(el("div", {}, el("dt", {}, k), el("dd", {}, v)));
    return d;
  }

  /* The documents the processing job of @def (its jobToPushTo) has
   * indexed in its current run, or null. */
  async function indexing(def) {
    const target = def.parameters && def.parameters.jobToPushTo;
    if (!target) return null;
    const info = await api("GET", "/smila/jobmanager/jobs/" + enc(target) + "/");
    const id = info.runs && info.runs.current;
    if (!id) return null;
    const run = await api("GET", "/smila/jobmanager/jobs/" + enc(target) + "/" + enc(id) + "/");
    return { job: target, indexed: counter(run, "records.indexed"), deleted: counter(run, "records.deleted") };
  }

  function renderProgress(run, id, ix) {
    const crawled = counter(run, "files.records") + counter(run, "files.uptodate") + counter(run, "records.crawled");
    const start = Date.parse(run.startTime);
    const end = run.endTime ? Date.parse(run.endTime) : Date.now();
    const secs = Math.max((end - start) / 1000, 0.001);
    const t = run.tasks || {};
    const pairs = [
      ["State", el("span", { class: "state " + run.state, id: "run-state" }, run.state)],
      ["Run", id],
      ["Tasks done / created", el("span", { id: "run-tasks" }, fmt(Number(t.successfulTaskCount || 0) + Number(t.failedAfterRetryTaskCount || 0) +
        Number(t.failedWithoutRetryTaskCount || 0) + Number(t.obsoleteTaskCount || 0) + Number(t.cancelledTaskCount || 0)) + " / " + fmt(t.createdTaskCount))],
      ["Crawled", fmt(crawled)],
      ["Pushed", el("span", { id: "run-pushed" }, fmt(counter(run, "records.pushed")))],
      ["Deleted", fmt(counter(run, "records.deleted"))],
      ["Rate", fmt(Math.round(crawled / secs)) + " records/s"],
      ["Time", secs.toFixed(1) + " s"],
    ];
    if (ix) pairs.push(["Indexing (" + ix.job + ")", el("span", { id: "run-indexed" }, fmt(ix.indexed) + " indexed, " + fmt(ix.deleted) + " deleted")]);
    $("job-progress").replaceChildren(dlist(pairs));
  }

  function renderWorkers(run) {
    const rows = [];
    const keys = Object.keys(run.worker || {}).sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
    for (const k of keys) {
      const c = run.worker[k];
      const tasks = Number(c.successfulTaskCount || 0);
      const rest = Object.entries(c).filter(([n]) => !n.endsWith("TaskCount"))
        .map(([n, v]) => n + " " + (Number.isInteger(v) ? fmt(v) : Number(v).toFixed(2))).join(", ");
      rows.push(el("tr", {}, el("td", {}, k.replace(/^\d+_/, "")), el("td", { class: "num" }, fmt(tasks)),
        el("td", { class: "counters" }, rest)));
    }
    fill($("job-workers").tBodies[0], rows);
  }

  /* The workflow as a column of its actions, an arrow for each bucket
   * from the action that writes it to each action that reads it (a
   * self-loop for a crawler's own bucket), buckets read by no action of
   * the workflow at the bottom. */
  function renderGraph(wf) {
    const acts = [wf.startAction].concat(wf.actions || []).filter(Boolean);
    const W = 520, BH = 34, GAP = 64, X = 150, BW = 200;
    const y = (i) => 12 + i * (BH + GAP);
    const ns = "http://www.w3.org/2000/svg";
    const s = (tag, attrs, text) => {
      const e = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      if (text !== undefined) e.textContent = text;
      return e;
    };
    const readers = {};
    acts.forEach((a, i) => Object.values(a.input || {}).forEach((b) => (readers[b] = readers[b] || []).push(i)));
    const edges = [];
    const sinks = [];
    acts.forEach((a, i) => Object.values(a.output || {}).forEach((b) => {
      if (readers[b]) readers[b].forEach((j) => edges.push([i, j, b]));
      else sinks.push([i, b]);
    }));
    const H = y(acts.length) + sinks.length * 24 + 10;
    const svg = s("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "workflow " + wf.name });
    const defsEl = s("defs", {});
    const m = s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    m.append(s("path", { d: "M0,0 L10,5 L0,10 z", fill: "#5b6570" }));
    defsEl.append(m);
    svg.append(defsEl);
    edges.forEach(([i, j, b], k) => {
      const x = X + BW / 2;
      let d;
      if (j === i + 1) d = "M" + x + "," + (y(i) + BH) + " L" + x + "," + y(j);
      else if (j === i) d = "M" + (X + BW) + "," + (y(i) + 8) + " c40,-20 40,40 0," + (BH - 16);
      else d = "M" + (X + BW) + "," + (y(i) + BH / 2) + " C" + (X + BW + 80 + k * 6) + "," + (y(i) + BH / 2) + " " +
        (X + BW + 80 + k * 6) + "," + (y(j) + BH / 2) + " " + (X + BW) + "," + (y(j) + BH / 2);
      svg.append(s("path", { d, class: "edge" }));
      const ly = j === i + 1 ? (y(i) + BH + y(j)) / 2 + 4 : y(i) + BH / 2 - 6;
      svg.append(s("text", { x: j === i + 1 ? x + 8 : X + BW + 44, y: ly, class: "bucket" }, b));
    });
    acts.forEach((a, i) => {
      const g = s("g", { class: "node" });
      g.append(s("rect", { x: X, y: y(i), width: BW, height: BH, rx: 6 }));
      g.append(s("text", { x: X + 10, y: y(i) + 22 }, a.worker));
      svg.append(g);
    });
    sinks.forEach(([i, b], k) => {
      svg.append(s("text", { x: 8, y: y(acts.length) + k * 24, class: "bucket" }, a11yBucket(acts[i].worker, b)));
    });
    $("job-graph").replaceChildren(svg);
  }

  function a11yBucket(worker, bucket) {
    return worker + " → " + bucket;
  }

  async function refreshJob(gen, name) {
    const def = await jobDef(name);
    $("job-title").textContent = "Job " + name + " (" + (def.workflow || "") + ")";
    if (!defs["wf:" + def.workflow]) {
      defs["wf:" + def.workflow] = await api("GET", "/smila/jobmanager/workflows/" + enc(def.workflow) + "/");
      renderGraph(defs["wf:" + def.workflow]);
    } else if (!$("job-graph").firstChild) {
      renderGraph(defs["wf:" + def.workflow]);
    }
    const info = await api("GET", "/smila/jobmanager/jobs/" + enc(name) + "/");
    const runs = info.runs || {};
    const id = runs.current || last(runs.completed);
    if (gen !== generation) return;
    const run = id ? await runData(name, id) : null;
    if (gen !== generation) return;
    $("job-actions").replaceChildren(...buttons(name, runs.current, runs.current ? run.state : "", !!(runs.current && run.paused)));
    if (!run) {
      $("job-progress").textContent = "This job has not run yet.";
      return;
    }
    const ix = await indexing(def).catch(() => null);
    if (gen !== generation) return;
    renderProgress(run, id, ix);
    renderWorkers(run);
    const docs = await api("GET", "/smila/jobmanager/jobs/" + enc(name) + "/" + enc(id) + "/documents/?state=failed&limit=100")
      .catch(() => ({ documents: [] }));
    if (gen !== generation) return;
    $("job-failed-run").textContent = "(run " + id + ")";
    const rows = (docs.documents || []).map((d) => el("tr", {},
      el("td", { class: "counters" }, d.id), el("td", {}, d.worker || ""), el("td", {}, d.reason || ""), el("td", {}, d.message || "")));
    if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "none")));
    fill($("job-failed").tBodies[0], rows);
  }

  /* ------------------------------------------------------------------
   * Search.
   * ---------------------------------------------------------------- */

  /* The snippet's text with its <b>…</b> matches as <mark>; the rest is
   * text, never markup (the index does not escape it). */
  function snippet(s) {
    const out = el("div", { class: "snippet" });
    const parts = String(s || "").split(/(<b>|<\/b>)/);
    let on = false;
    for (const p of parts) {
      if (p === "<b>") on = true;
      else if (p === "</b>") on = false;
      else if (p) out.append(on ? el("mark", {}, p) : document.createTextNode(p));
    }
    return out;
  }

  async function loadIndexes() {
    const sel = $("search-index");
    if (sel.options.length) return;
    const list = await api("GET", "/smila/index/");
    for (const ix of list.indexes || []) sel.append(el("option", { value: ix.name }, ix.name + " (" + fmt(ix.documentCount) + ")"));
  }

  /* The search: a page of hits, the facets to narrow it by (a value adds
   * its filter to the query), an order, and more hits by the cursor. */
  const FACETS = [
    ["type", "Type", (v) => "type:" + v],
    ["ext", "Extension", (v) => "ext:" + v],
    ["year", "Year", (v) => "modified:" + v],
    ["source", "Source", (v) => "source:" + v],
    ["host", "Site", (v) => "host:" + v],
  ];
  let searchNext = null; /* the cursor, and the search it belongs to */
  let searchUrl = "";
  let searchSeq = 0; /* a reply of an older search is dropped */

  function hitItem(h) {
    const meta = [h.host, h.mimeType, h.modified && String(h.modified).slice(0, 10),
      typeof h.size === "number" ? bytes(h.size) : null].filter(Boolean).join(" · ");
    return el("li", {}, el("div", { class: "title" }, h.title || h._recordid),
      el("div", { class: "id" }, h._recordid), meta ? el("div", { class: "meta" }, meta) : null, snippet(h.snippet));
  }

  function quoted(v) {
    return /[\s"()]/.test(v) ? '"' + v.replace(/"/g, "") + '"' : v;
  }

  function showFacets(facets) {
    const box = $("search-facets");
    box.replaceChildren();
    for (const [name, label, filter] of FACETS) {
      const list = (facets || {})[name] || [];
      if (!list.length) continue;
      box.append(el("h3", {}, label), el("ul", {}, ...list.map((f) => el("li", {},
        el("button", { type: "button", title: "only " + f.value, onclick: () => {
          $("search-q").value = $("search-q").value.trim() + " " + filter(quoted(f.value));
          runSearch(false);
        } }, f.value), el("span", { class: "count" }, fmt(f.count))))));
    }
  }

  async function runSearch(more) {
    const q = $("search-q").value;
    const ix = $("search-index").value || "default";
    const order = $("search-sort").value;
    /* More continues the search shown, whatever the form says now */
    const base = more ? searchUrl
      : "/smila/index/" + enc(ix) + "/search?limit=20&q=" + enc(q) + (order ? "&" + order : "");
    const url = base + (more ? "&cursor=" + enc(searchNext) : "&facets=" + FACETS.map((f) => f[0]).join(","));
    const seq = ++searchSeq;
    $("search-more").disabled = true;
    try {
      const r = await api("GET", url);
      if (seq !== searchSeq) return;
      searchUrl = base;
      const items = (r.hits || []).map(hitItem);
      if (more) {
        $("search-hits").append(...items);
      } else {
        $("search-total").textContent = fmt(r.total) + " documents match";
        $("search-hits").replaceChildren(...items);
        showFacets(r.facets);
      }
      searchNext = r.next || null;
      $("search-more").hidden = !searchNext;
      $("search-more").disabled = false;
      showError("");
    } catch (e) {
      if (seq !== searchSeq) return;
      $("search-more").disabled = false;
      if (!more) {
        $("search-total").textContent = "";
        $("search-hits").replaceChildren();
        $("search-facets").replaceChildren();
      }
      $("search-more").hidden = true;
      showError("search: " + e.message);
    }
  }

  $("search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    runSearch(false);
  });
  $("search-sort").addEventListener("change", () => {
    if ($("search-q").value) runSearch(false);
  });
  $("search-more").addEventListener("click", () => runSearch(true));

  /* ------------------------------------------------------------------
   * Routing and polling.
   * ---------------------------------------------------------------- */

  function show(id) {
    for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== id;
  }

  function poll(gen, fn) {
    const tick = async () => {
      if (gen !== generation) return;
      try {
        await fn(gen);
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 401)) showError(e.message);
      }
      if (gen === generation && !document.hidden) timer = setTimeout(tick, POLL_MS);
    };
    tick();
  }

  function route() {
    const gen = ++generation;
    clearTimeout(timer);
    const h = location.hash || "#/";
    const m = h.match(/^#\/job\/(.+)$/);
    let name = null;
    try {
      name = m ? decodeURIComponent(m[1]) : null;
    } catch (e) {
      name = null; /* a malformed address: the jobs */
    }
    if (name !== null) {
      show("view-job");
      $("job-graph").replaceChildren();
      poll(gen, (g) => refreshJob(g, name));
    } else if (h === "#/search") {
      show("view-search");
      loadIndexes().catch((e) => showError(e.message));
    } else {
      show("view-jobs");
      poll(gen, refreshJobs);
    }
  }

  window.addEventListener("hashchange", route);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) route();
  });
  api("GET", "/smila/").then((s) => ($("version").textContent = s.name + " " + s.version)).catch(() => {});
  route();
})();
