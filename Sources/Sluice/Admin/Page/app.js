"use strict";
// The Sluice admin page. Everything that came from traffic (URLs, header fields, bodies,
// problem texts) is put in the page as text (textContent, text nodes), never as markup.
(() => {
  const LIMIT = 5000;        // exchanges kept in the page
  const SHOWN = 500;         // rows drawn at once (the newest that match the filters)
  const PREVIEW = 1 << 20;   // body bytes previewed
  const state = {
    events: [], byId: new Map(), paused: false, held: [], picked: null, flight: new Map(),
    token: sessionStorage.getItem("sluice-token") || "", proxy: null, view: "live",
    renderDue: false, entryPicked: null, cacheRows: [],
    // WebSocket messages per upgraded exchange (the newest MESSAGES of each, for EXCHANGES exchanges).
    messages: new Map(),
  };
  const MESSAGES = 2000, MESSAGE_EXCHANGES = 100;
  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value == null) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child == null) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  const size = (n) => n == null ? "" : n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" :
    (n / 1048576).toFixed(1) + " MiB";
  const clock = (t) => { const d = new Date(t * 1000);
    return d.toTimeString().slice(0, 8) + "." + String(d.getMilliseconds()).padStart(3, "0"); };
  const hostOf = (url) => { try { return new URL(url).host; } catch { return url.split("/")[0]; } };

  function notice(text) {
    const box = $("notice");
    box.textContent = text;
    box.hidden = !text;
    if (text) setTimeout(() => { if (box.textContent === text) box.hidden = true; }, 6000);
  }

  // ---- admin calls (the token, when admin.token is set) ----
  async function admin(url, options = {}) {
    const headers = Object.assign({}, options.headers || {});
    if (state.token) headers["Authorization"] = "Bearer " + state.token;
    const response = await fetch(url, Object.assign({}, options, { headers }));
    if (response.status === 401) {
      askToken();
      throw new Error("this needs the admin token (admin.token): enter it and try again");
    }
    return response;
  }
  function askToken() { $("token-form").hidden = false; $("token-input").focus(); }
  $("token-button").addEventListener("click", askToken);
  $("token-cancel").addEventListener("click", () => { $("token-form").hidden = true; });
  $("token-save").addEventListener("click", () => {
    state.token = $("token-input").value;
    sessionStorage.setItem("sluice-token", state.token);
    $("token-form").hidden = true;
    notice("Token set for this tab.");
  });

  function confirmAction(text) {
    return new Promise((resolve) => {
      $("confirm-text").textContent = text;
      $("confirm").hidden = false;
      const done = (answer) => { $("confirm").hidden = true; yes.onclick = no.onclick = null; resolve(answer); };
      const yes = $("confirm-yes"), no = $("confirm-no");
      yes.onclick = () => done(true);
      no.onclick = () => done(false);
    });
  }

  // ---- tabs ----
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => show(button.dataset.view));
  }
  function show(view) {
    state.view = view;
    for (const button of document.querySelectorAll("#tabs button")) {
      button.classList.toggle("active", button.dataset.view === view);
    }
    for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== "view-" + view;
    if (view === "cache") loadCache();
    if (view === "overview") loadOverview();
    if (view === "devices") loadDevices();
    if (view === "paused") loadPaused();
    if (view === "flight") renderFlight();
    if (view === "live") scheduleRender();
  }

  // ---- the event stream ----
  function connect() {
    const source = new EventSource("/events");
    source.onopen = () => { $("stream-state").textContent = "live"; $("stream-state").className = "state live"; };
    source.onerror = () => { $("stream-state").textContent = "reconnecting…"; $("stream-state").className = "state"; };
    source.addEventListener("exchange", (message) => received(JSON.parse(message.data)));
    source.addEventListener("start", (message) => {
      const start = JSON.parse(message.data);
      state.flight.set(start.id, { id: start.id, method: start.method, url: start.url, started: start.time,
        up: 0, up_total: null, down: 0, down_total: null });
      flightChanged();
    });
    source.addEventListener("websocket", (message) => webSocketMessage(JSON.parse(message.data)));
    source.addEventListener("progress", (message) => {
      const progress = JSON.parse(message.data);
      state.flight.set(progress.id, progress);
      flightChanged();
    });
  }

  function received(event) {
    if (state.flight.delete(event.id)) flightChanged();
    if (state.paused) {
      state.held.push(event);
      if (state.held.length > LIMIT) state.held.shift();
      $("live-count").textContent = "paused, " + state.held.length + " waiting";
      return;
    }
    keep(event);
    scheduleRender();
  }
  function keep(event) {
    // An upgraded exchange is shown when it switches, and again (with its bytes) when it ends.
    if (state.byId.has(event.id)) {
      const index = state.events.findIndex((e) => e.id === event.id);
      if (index >= 0) state.events[index] = Object.assign({}, state.events[index], event, { upgraded: state.events[index].upgraded || event.upgraded });
      state.byId.set(event.id, state.events[index]);
      if (state.picked === event.id) showDetail(event.id);
      return;
    }
    state.events.push(event);
    state.byId.set(event.id, event);
    while (state.events.length > LIMIT) state.byId.delete(state.events.shift().id);
  }

  // ---- WebSocket messages ----
  function webSocketMessage(m) {
    let list = state.messages.get(m.id);
    if (!list) {
      list = [];
      state.messages.set(m.id, list);
      if (state.messages.size > MESSAGE_EXCHANGES) state.messages.delete(state.messages.keys().next().value);
    }
    list.push(m);
    if (list.length > MESSAGES) list.shift();
    const table = state.picked === m.id && document.querySelector("#detail table.messages tbody");
    if (table) table.append(messageRow(m));
  }
  const opcodes = { 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong" };
  function messageRow(m) {
    let data = m.text != null ? m.text : m.hex;
    if (m.close_code != null) data = m.close_code + (data ? " " + data : "");
    if (m.truncated) data += " … (" + size(m.size) + (m.compressed ? " compressed" : "") + ")";
    return el("tr", { class: "ws-" + m.direction },
      el("td", { text: clock(m.time) }), el("td", { text: m.direction === "send" ? "↑ sent" : "↓ received" }),
      el("td", { text: opcodes[m.opcode] || String(m.opcode) }), el("td", { class: "num", text: size(m.size) }),
      el("td", { class: m.text != null ? "ws-data" : "ws-data mono", text: data }));
  }
  function messagesTable(id) {
    return el("table", { class: "messages" },
      el("thead", {}, el("tr", {}, ...["time", "direction", "type", "size", "data"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...(state.messages.get(id) || []).map(messageRow)));
  }

  // ---- live list ----
  const filters = ["live-host", "live-text", "live-status", "live-cache", "live-failed", "live-contract"];
  for (const id of filters) {
    $(id).addEventListener("input", scheduleRender);
    $(id).addEventListener("change", scheduleRender);
  }
  $("live-pause").addEventListener("click", () => {
    state.paused = !state.paused;
    $("live-pause").textContent = state.paused ? "Resume" : "Pause";
    if (!state.paused) { for (const event of state.held) keep(event); state.held = []; scheduleRender(); }
  });
  $("live-clear").addEventListener("click", () => {
    state.events = []; state.byId.clear(); state.held = []; closeDetail(); scheduleRender();
  });
  $("live-har").addEventListener("click", async () => {
    // The captured bodies too, a few requests at a time.
    const exchanges = matching();
    const entries = new Array(exchanges.length);
    let next = 0;
    async function worker() {
      while (next < exchanges.length) {
        const index = next++;
        entries[index] = harEntry(exchanges[index], await capturedBody(exchanges[index]));
      }
    }
    await Promise.all([worker(), worker(), worker(), worker()]);
    downloadHar(entries, "sluice-exchanges.har");
  });

  function matching() {
    const host = $("live-host").value.trim().toLowerCase();
    const text = $("live-text").value.trim().toLowerCase();
    const status = $("live-status").value, cache = $("live-cache").value, failed = $("live-failed").checked;
    const contract = $("live-contract").value;
    return state.events.filter((e) => {
      if (host && !hostOf(e.url).toLowerCase().includes(host)) return false;
      if (text && ![e.url, e.rule, e.error, e.transform, e.method].some((v) => v && String(v).toLowerCase().includes(text))) return false;
      if (status === "err" ? !e.error : status && String(Math.floor(e.status / 100)) !== status) return false;
      const cs = e.cache_status || "";
      if (cache === "hit" && !cs.includes("; hit")) return false;
      if (cache === "fwd" && !cs.includes("fwd=")) return false;
      if (cache === "stored" && !cs.includes("stored")) return false;
      // Failed checks only: a response that passed, or that no check ran on (null), is left out.
      if (failed && !(e.validation && e.validation !== "passed") && !contractBroken(e)) return false;
      if (contract === "checked" && !e.contract) return false;
      if (contract === "broken" && !contractBroken(e)) return false;
      return true;
    });
  }

  function scheduleRender() {
    if (state.renderDue) return;
    state.renderDue = true;
    setTimeout(renderLive, 120);
  }

  function tag(text, kind) { return el("span", { class: "tag " + (kind || ""), text }); }
  function cacheTag(status) {
    if (!status) return "";
    const short = status.replace(/^Sluice; /, "");
    return tag(short, short.startsWith("hit") ? "hit" : short.includes("stored") ? "stored" : "");
  }
  function contractBroken(e) { return !!(e.contract && e.contract.outcome === "failed"); }
  function contractTag(e) {
    if (!contractBroken(e)) return "";
    const n = e.contract.violations_total;
    return tag("contract ×" + n, e.status === 502 || e.status === 400 ? "rejected" : "failed");
  }
  function validationTag(validation) {
    if (!validation || validation === "passed") return "";
    return tag(validation.split(":")[0], validation.startsWith("rejected") ? "rejected" : "failed");
  }

  function renderLive() {
    state.renderDue = false;
    if (state.view !== "live") return;
    const rows = matching();
    const shown = rows.slice(-SHOWN).reverse();
    const body = document.createDocumentFragment();
    for (const e of shown) {
      const row = el("tr", { "data-id": e.id, class: e.id === state.picked ? "picked" : null },
        el("td", { text: clock(e.time) }), el("td", { text: e.method }),
        el("td", { title: e.url }, e.client === "composed" ? el("span", { class: "tag composed", text: "composed" }) : null,
          e.client === "composed" ? " " : null, e.url),
        el("td", { class: "s" + Math.floor(e.status / 100), text: e.status || "—" }),
        el("td", {}, cacheTag(e.cache_status)), el("td", {}, validationTag(e.validation), contractTag(e)),
        el("td", { class: "num", text: size(e.bytes) }), el("td", { class: "num", text: Math.round(e.duration_ms) }));
      body.append(row);
    }
    $("live-table").tBodies[0].replaceChildren(body);
    $("live-count").textContent = (state.paused ? "paused · " : "") + rows.length + " of " + state.events.length +
      " exchanges" + (rows.length > SHOWN ? " (newest " + SHOWN + " shown)" : "");
  }

  $("live-table").tBodies[0].addEventListener("click", (click) => {
    const row = click.target.closest("tr");
    if (row) showDetail(Number(row.dataset.id));
  });

  // ---- one exchange ----
  function closeDetail() { state.picked = null; $("detail").hidden = true; $("detail").replaceChildren(); }

  function fieldsTable(fields) {
    const table = el("table", { class: "fields" });
    for (const [name, value] of fields || []) table.append(el("tr", {}, el("td", { text: name }), el("td", { text: value })));
    return table;
  }

  function waterfall(timeline) {
    const total = Math.max(timeline.complete_ms, 0.001);
    const box = el("div", { class: "timeline" });
    const phases = [
      ["queued", 0, timeline.queued_ms],
      ["dns", timeline.queued_ms, timeline.dns_ms],
      ["connect", timeline.queued_ms + timeline.dns_ms, timeline.connect_ms],
      ["tls", timeline.queued_ms + timeline.dns_ms + timeline.connect_ms, timeline.tls_ms],
      ["wait", timeline.queued_ms + timeline.dns_ms + timeline.connect_ms + timeline.tls_ms,
        Math.max(0, timeline.first_byte_ms - timeline.dns_ms - timeline.connect_ms - timeline.tls_ms)],
    ];
    const firstByte = timeline.queued_ms + timeline.first_byte_ms;
    phases.push(["receive", firstByte, Math.max(0, timeline.complete_ms - firstByte)]);
    for (const [name, start, length] of phases) {
      const bar = el("span", { class: "phase-" + name });
      bar.style.left = (100 * start / total).toFixed(2) + "%";
      bar.style.width = (100 * length / total).toFixed(2) + "%";
      box.append(el("div", { class: "timeline-row" }, el("span", { text: name }),
        el("div", { class: "waterfall" }, bar), el("span", { class: "num", text: length.toFixed(2) + " ms" })));
    }
    return box;
  }

  async function readUpTo(response, limit) {
    const reader = response.body.getReader();
    const parts = [];
    let count = 0;
    while (count < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      count += value.length;
    }
    if (count >= limit) reader.cancel().catch(() => {});
    const bytes = new Uint8Array(Math.min(count, limit));
    let offset = 0;
    for (const part of parts) {
      const piece = part.subarray(0, Math.min(part.length, bytes.length - offset));
      bytes.set(piece, offset);
      offset += piece.length;
      if (offset >= bytes.length) break;
    }
    return bytes;
  }

  function hexDump(bytes) {
    const lines = [];
    for (let offset = 0; offset < Math.min(bytes.length, 4096); offset += 16) {
      const row = bytes.subarray(offset, offset + 16);
      const hex = Array.from(row, (b) => b.toString(16).padStart(2, "0")).join(" ");
      const text = Array.from(row, (b) => b >= 32 && b < 127 ? String.fromCharCode(b) : ".").join("");
      lines.push(offset.toString(16).padStart(8, "0") + "  " + hex.padEnd(48) + "  " + text);
    }
    return lines.join("\n");
  }

  // A JSON value, pretty, with each value a span that knows its JSON Pointer; the pointers in
  // `marks` are highlighted with their violation as the title.
  function markedJSON(value, marks) {
    const root = el("pre", { class: "body-text marked" });
    const escape = (token) => String(token).replace(/~/g, "~0").replace(/\//g, "~1");
    function write(parent, v, pointer, indent) {
      const span = el("span", { "data-pointer": pointer });
      if (marks.has(pointer)) { span.classList.add("violation"); span.title = marks.get(pointer); }
      if (Array.isArray(v)) {
        span.append(v.length ? "[\n" : "[");
        v.forEach((item, i) => {
          span.append(indent + "  ");
          write(span, item, pointer + "/" + i, indent + "  ");
          span.append(i < v.length - 1 ? ",\n" : "\n");
        });
        span.append((v.length ? indent : "") + "]");
      } else if (v && typeof v === "object") {
        const keys = Object.keys(v);
        span.append(keys.length ? "{\n" : "{");
        keys.forEach((key, i) => {
          span.append(indent + "  " + JSON.stringify(key) + ": ");
          write(span, v[key], pointer + "/" + escape(key), indent + "  ");
          span.append(i < keys.length - 1 ? ",\n" : "\n");
        });
        span.append((keys.length ? indent : "") + "}");
      } else {
        span.append(JSON.stringify(v));
      }
      parent.append(span);
    }
    write(root, value, "", "");
    return root;
  }

  async function preview(container, url, name, whole, marks) {
    container.replaceChildren(el("p", { class: "muted", text: "loading…" }));
    try {
      const response = await fetch(url);
      if (!response.ok) {
        container.replaceChildren(el("p", { class: "muted", text: "No body kept (" + response.status + ")." }));
        return;
      }
      const type = (response.headers.get("content-type") || "").toLowerCase();
      const total = Number(response.headers.get("sluice-body-total") || response.headers.get("content-length") || 0);
      const bytes = await readUpTo(response, PREVIEW);
      const parts = [];
      if (type.startsWith("image/")) {
        const image = el("img", { class: "preview-image", alt: "response image" });
        image.src = URL.createObjectURL(new Blob([bytes], { type }));
        parts.push(image);
      } else if (/json|^text\/|xml|javascript|x-www-form-urlencoded/.test(type) || bytes.length === 0) {
        let text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
        let shown = null;
        if (/json/.test(type)) {
          try {
            const value = JSON.parse(text);
            if (marks && marks.size && bytes.length <= 256 * 1024) shown = markedJSON(value, marks);
            text = JSON.stringify(value, null, 2);
          } catch {}
        }
        parts.push(shown || el("pre", { class: "body-text", text }));
      } else {
        parts.push(el("p", { class: "muted", text: "binary (" + (type || "no type") + "), first bytes:" }));
        parts.push(el("pre", { class: "body-hex", text: hexDump(bytes) }));
      }
      const cut = total > bytes.length || bytes.length >= PREVIEW;
      const note = el("p", { class: "muted" }, (cut ? "First " + size(bytes.length) + " of " + size(total || bytes.length) + ". " : size(bytes.length) + ". "),
        el("a", { href: url, download: name || "body" , text: cut ? "Download what was kept" : "Download" }));
      parts.push(note);
      container.replaceChildren(...parts);
      // The rest of a cut exchange body, when the cache holds the whole response.
      if (cut && whole) {
        const glob = whole.replace(/[[*?]/g, (c) => "[" + c + "]");
        const stored = await (await fetch("/cache?limit=1&url=" + encodeURIComponent(glob))).json();
        if (Array.isArray(stored) && stored.length) {
          note.append(" · ", el("a", { href: "/cache/" + stored[0].id + "/body", download: name || "body", text: "Download the whole body (stored)" }));
        }
      }
    } catch (error) {
      container.replaceChildren(el("p", { class: "muted", text: "The body could not be read: " + error.message }));
    }
  }

  function shellQuote(text) { return "'" + String(text).replace(/'/g, "'\\''") + "'"; }
  function curlCommand(e) {
    const parts = ["curl"];
    if (state.proxy) parts.push("-x", "http://" + state.proxy);
    // HEAD is -I: `-X HEAD` makes curl wait for a body that never comes.
    if (e.method === "HEAD") parts.push("-I");
    else if (e.method !== "GET") parts.push("-X", shellQuote(e.method));
    parts.push(shellQuote(e.url));
    let hadBody = false;
    for (const [name, value] of e.request_headers || []) {
      if (/^(content-length)$/i.test(name) && Number(value) > 0) hadBody = true;
      if (/^transfer-encoding$/i.test(name)) hadBody = true;
      if (/^(host|content-length|connection|proxy-connection|proxy-authorization|transfer-encoding)$/i.test(name)) continue;
      parts.push("-H", shellQuote(name + ": " + value));
    }
    // The page keeps no request body: said, not left out silently.
    if (hadBody) parts.push("--data-binary", "@request-body", "# the request body is not kept: put it in ./request-body");
    return parts.join(" ");
  }

  // A captured body as HAR content: text when it is UTF-8, else base64 (never mangled).
  function harContent(bytes) {
    if (bytes == null) return {};
    try {
      return { size: bytes.length, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
    } catch {
      let binary = "";
      for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return { size: bytes.length, text: btoa(binary), encoding: "base64" };
    }
  }

  async function capturedBody(e) {
    if (!e.body_captured) return null;
    try {
      const response = await fetch("/exchanges/" + e.id + "/body");
      return response.ok ? new Uint8Array(await response.arrayBuffer()) : null;
    } catch { return null; }
  }

  function harEntry(e, bodyBytes) {
    const t = e.timeline;
    const headers = (fields) => (fields || []).map(([name, value]) => ({ name, value }));
    const field = (fields, wanted) => ((fields || []).find(([n]) => n.toLowerCase() === wanted) || [])[1];
    const type = field(e.response_headers, "content-type");
    let queryString = [];
    try { queryString = [...new URL(e.url).searchParams].map(([name, value]) => ({ name, value })); } catch {}
    const requestLength = Number(field(e.request_headers, "content-length"));
    // HAR 1.2 cookies: the request's Cookie pairs, the response's Set-Cookie names and values.
    const requestCookies = (e.request_headers || []).filter(([n]) => n.toLowerCase() === "cookie")
      .flatMap(([, value]) => value.split(";")).map((pair) => pair.trim()).filter(Boolean)
      .map((pair) => { const at = pair.indexOf("="); return at < 0 ? { name: pair, value: "" } : { name: pair.slice(0, at), value: pair.slice(at + 1) }; });
    const responseCookies = (e.response_headers || []).filter(([n]) => n.toLowerCase() === "set-cookie")
      .map(([, value]) => { const first = value.split(";")[0]; const at = first.indexOf("=");
        return at < 0 ? { name: first.trim(), value: "" } : { name: first.slice(0, at).trim(), value: first.slice(at + 1).trim() }; });
    // The body as delivered (decoded); what went over the wire was `e.bytes` (HAR 1.2: size,
    // and compression, the bytes saved).
    const content = Object.assign({ size: e.bytes, mimeType: type || "" }, harContent(bodyBytes));
    if (bodyBytes != null && field(e.response_headers, "content-encoding") && content.size > e.bytes) {
      content.compression = content.size - e.bytes;
    }
    const heldResponse = e.paused_ms ? e.paused_ms.response : 0;
    const held = e.paused_ms ? e.paused_ms.request + heldResponse : 0;
    const entry = {
      startedDateTime: new Date((e.time - e.duration_ms / 1000) * 1000).toISOString(),
      time: e.duration_ms,
      request: { method: e.method, url: e.url, httpVersion: e.http_version || "HTTP/1.1", cookies: requestCookies, headers: headers(e.request_headers),
        queryString, headersSize: -1,
        bodySize: Number.isFinite(requestLength) && field(e.request_headers, "content-length") != null ? requestLength : -1 },
      response: { status: e.status, statusText: e.reason || "", httpVersion: e.http_version || "HTTP/1.1", cookies: responseCookies, headers: headers(e.response_headers),
        content, redirectURL: field(e.response_headers, "location") || "", headersSize: -1, bodySize: e.bytes },
      cache: {},
      // Time held at breakpoints is no origin's: it counts as blocked (a request's is in
      // queued already; a response's comes out of receive), and _paused says how much it was.
      timings: t ? { blocked: t.queued_ms + heldResponse, dns: t.dns_ms, connect: t.connect_ms + t.tls_ms, ssl: t.tls_ms, send: 0,
        wait: Math.max(0, t.first_byte_ms - t.dns_ms - t.connect_ms - t.tls_ms),
        receive: Math.max(0, t.complete_ms - t.queued_ms - t.first_byte_ms - heldResponse), _paused: held }
        : { blocked: held, send: 0, wait: Math.max(0, e.duration_ms - held), receive: 0, _paused: held },
      comment: [e.cache_status, e.rule && "rule " + e.rule, e.validation, e.transform, e.mapped && "mapped " + e.mapped,
        e.fault && "fault " + e.fault, e.replayed && "replayed recorded exchange #" + e.replayed,
        e.breakpoint && "breakpoint: " + e.breakpoint, e.error]
        .filter(Boolean).join("; "),
      _sluice: { id: e.id, rule: e.rule || null, cache_status: e.cache_status || null, validation: e.validation || null,
        transform: e.transform || null, contract: e.contract || null, mapped: e.mapped || null, fault: e.fault || null,
        replayed: e.replayed || null, breakpoint: e.breakpoint || null },
    };
    // As Chrome writes them: one entry per message, `data` the text (or the hex of a binary one).
    const messages = state.messages.get(e.id);
    if (e.upgraded || messages) {
      entry._resourceType = "websocket";
      entry._webSocketMessages = (messages || []).map((m) => ({ type: m.direction, time: m.time, opcode: m.opcode,
        data: m.text != null ? m.text : m.hex }));
    }
    return entry;
  }

  function downloadHar(entries, name) {
    const har = { log: { version: "1.2", creator: { name: "Sluice", version: "1" }, entries } };
    const link = el("a", { download: name });
    link.href = URL.createObjectURL(new Blob([JSON.stringify(har, null, 2)], { type: "application/json" }));
    document.body.append(link);
    link.click();
    link.remove();
  }

  function showDetail(id) {
    const e = state.byId.get(id);
    if (!e) return;
    state.picked = id;
    for (const row of $("live-table").tBodies[0].rows) row.classList.toggle("picked", Number(row.dataset.id) === id);
    const box = $("detail");
    box.hidden = false;
    const curl = el("pre", { class: "curl", hidden: "" });
    const resendCount = el("input", { type: "number", min: "1", max: "100", value: "5", class: "count",
      "aria-label": "How many times to resend" });
    const parts = [
      el("h2", {}, e.method + " ", el("span", { class: "s" + Math.floor(e.status / 100), text: String(e.status) }), " ", e.url),
      el("div", { class: "actions" },
        el("button", { text: "Copy as curl", onclick: () => {
          curl.textContent = curlCommand(e); curl.hidden = false;
          if (navigator.clipboard) navigator.clipboard.writeText(curl.textContent).catch(() => {});
        } }),
        el("button", { text: "Edit and resend", onclick: () => openComposer(e) }),
        resendCount,
        el("button", { text: "Resend ×N", title: "Send it again N times in a row (the number beside)",
          onclick: () => resendTimes(e, Number(resendCount.value)) }),
        el("button", { text: "HAR", onclick: async () => {
          downloadHar([harEntry(e, await capturedBody(e))], "sluice-exchange-" + e.id + ".har");
        } }),
        el("button", { class: "quiet", text: "Close", onclick: closeDetail })),
      curl,
    ];
    const summary = el("dl", {});
    const add = (name, value) => { if (value != null && value !== "") summary.append(el("dt", { text: name }), el("dd", { text: String(value) })); };
    add("time", new Date(e.time * 1000).toLocaleString());
    add("client", e.client);
    add("cache", e.cache_status);
    add("rule", e.rule || "(defaults)");
    add("validation", e.validation);
    add("transform", e.transform);
    add("mapped", e.mapped);
    add("fault", e.fault);
    add("replayed", e.replayed && "recorded exchange #" + e.replayed);
    add("size", size(e.bytes));
    add("duration", e.duration_ms + " ms");
    add("error", e.error);
    if (e.aborted) add("aborted", "the connection was cut after the head");
    parts.push(summary);
    if (e.problem) {
      parts.push(el("h3", { text: "Rejected: the problem sent" }),
        el("div", { class: "problem" }, el("dl", {},
          el("dt", { text: "type" }), el("dd", { text: e.problem.type }),
          el("dt", { text: "title" }), el("dd", { text: e.problem.title }),
          el("dt", { text: "status" }), el("dd", { text: String(e.problem.status) }),
          el("dt", { text: "detail" }), el("dd", { class: "problem-detail", text: e.problem.detail }),
          el("dt", { text: "rule" }), el("dd", { class: "problem-rule", text: e.rule || "(defaults)" }))));
    }
    const marks = new Map();
    if (e.contract) {
      const c = e.contract;
      const head = el("p", { class: "contract-summary" },
        c.outcome === "failed"
          ? (c.violations_total + " violation" + (c.violations_total === 1 ? "" : "s") + " of the contract of rule " + c.rule)
          : "contract " + c.outcome,
        c.operation || c.path ? " · " + [c.operation, c.method, c.path].filter(Boolean).join(" ") : "");
      parts.push(el("h3", { text: "Contract" }), head);
      if (c.violations && c.violations.length) {
        const table = el("table", { class: "violations" },
          el("thead", {}, el("tr", {}, ...["pointer", "keyword", "expected", "found", "schema"].map((h) => el("th", { text: h })))));
        const rows = el("tbody", {});
        for (const v of c.violations) {
          rows.append(el("tr", {}, el("td", { class: "pointer", text: v.pointer || "/" }), el("td", { text: v.keyword }),
            el("td", { text: v.expected }), el("td", { text: v.found }), el("td", { class: "muted", text: v.schema })));
          if (!marks.has(v.pointer)) marks.set(v.pointer, v.keyword + ": expected " + v.expected + ", found " + v.found);
        }
        table.append(rows);
        parts.push(table);
      }
    }
    if (e.stripped_keys && e.stripped_keys.length) {
      const list = el("ul", { class: "stripped" });
      for (const key of e.stripped_keys) list.append(el("li", { text: key }));
      parts.push(el("h3", { text: "Null stripping removed" }), list);
    }
    if (e.upgraded || state.messages.has(e.id)) {
      parts.push(el("h3", { text: "WebSocket messages" }), messagesTable(e.id));
    }
    if (e.timeline) parts.push(el("h3", { text: "Timeline" }), waterfall(e.timeline));
    if (e.paused_ms) {
      parts.push(el("p", { class: "muted", text: "Held at breakpoints: request " + e.paused_ms.request.toFixed(2) +
        " ms (in queued), response " + e.paused_ms.response.toFixed(2) + " ms (in receive)" }));
    }
    if (e.request_headers) parts.push(el("h3", { text: "Request header fields" }), fieldsTable(e.request_headers));
    if (e.sent_request) {
      const sent = e.sent_request;
      parts.push(el("h3", { text: "Request as sent upstream (edited at a breakpoint)" }),
        el("p", { class: "sent-line", text: (sent.method || e.method) + " " + (sent.url || e.url) + " · body " + sent.body_size + " bytes" }),
        fieldsTable(sent.headers));
    }
    if (e.response_headers) parts.push(el("h3", { text: "Response header fields" }), fieldsTable(e.response_headers));
    const body = el("div", { class: "body" });
    if (!e.upgraded) parts.push(el("h3", { text: "Body" }), body);
    box.replaceChildren(...parts);
    if (e.upgraded) return;
    if (e.body_captured || e.bytes) preview(body, "/exchanges/" + e.id + "/body", "body-" + e.id, e.method === "GET" ? e.url : null, marks);
    else body.append(el("p", { class: "muted", text: "No body." }));
  }

  // ---- in flight ----
  let flightDue = false;
  function flightChanged() {
    $("flight-count").textContent = String(state.flight.size);
    if (state.view !== "flight" || flightDue) return;
    flightDue = true;
    setTimeout(renderFlight, 100);
  }
  function bar(done, total) {
    const cell = el("td", {});
    const progress = el("progress", {});
    if (total) { progress.max = total; progress.value = Math.min(done, total); }
    else if (done > 0) { progress.removeAttribute("value"); }
    else { progress.max = 1; progress.value = 0; }
    cell.append(progress, " ", el("span", { class: "progress-text", text: size(done) + (total ? " / " + size(total) : "") }));
    return cell;
  }
  function renderFlight() {
    flightDue = false;
    const rows = document.createDocumentFragment();
    const now = Date.now() / 1000;
    for (const f of [...state.flight.values()].sort((a, b) => a.id - b.id)) {
      rows.append(el("tr", { "data-id": f.id }, el("td", { text: f.id }), el("td", { text: f.method }),
        el("td", { text: f.url, title: f.url }), el("td", { class: "num", text: Math.max(0, now - (f.started || now)).toFixed(1) }),
        bar(f.up, f.up_total), bar(f.down, f.down_total)));
    }
    $("flight-table").tBodies[0].replaceChildren(rows);
    $("flight-empty").hidden = state.flight.size > 0;
    $("flight-count").textContent = String(state.flight.size);
  }

  // ---- cache ----
  $("cache-refresh").addEventListener("click", loadCache);
  $("cache-query").addEventListener("keydown", (key) => { if (key.key === "Enter") loadCache(); });
  $("cache-host").addEventListener("keydown", (key) => { if (key.key === "Enter") loadCache(); });
  $("cache-sort").addEventListener("change", loadCache);
  $("cache-purge-all").addEventListener("click", () => purge("?all", "Purge every stored response?"));
  $("cache-purge-host").addEventListener("click", () => {
    const host = $("cache-host").value.trim();
    if (!host) { notice("Type the host to purge in the host field."); return; }
    purge("?host=" + encodeURIComponent(host), "Purge everything stored for " + host + "?");
  });
  $("cache-har").addEventListener("click", () => downloadHar(state.cacheRows.map(cacheHar), "sluice-cache.har"));

  function cacheHar(entry) {
    return {
      startedDateTime: new Date(entry.response_time * 1000).toISOString(), time: 0,
      request: { method: entry.method, url: entry.url, httpVersion: "HTTP/1.1", cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: -1 },
      response: { status: entry.status, statusText: "", httpVersion: "HTTP/1.1", cookies: [],
        headers: (entry.headers || []).map(([name, value]) => ({ name, value })),
        content: { size: entry.size, mimeType: entry.content_type || "" }, redirectURL: "", headersSize: -1, bodySize: entry.size },
      cache: {}, timings: { send: 0, wait: 0, receive: 0 },
    };
  }

  async function purge(query, question) {
    if (!(await confirmAction(question))) return;
    try {
      const response = await admin("/purge" + query, { method: "POST" });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.status);
      notice("Purged " + answer.purged + " entries (" + size(answer.bytes) + ").");
      closeEntry();
      loadCache();
    } catch (error) { notice(error.message); }
  }

  async function loadCache() {
    const query = $("cache-query").value.trim(), host = $("cache-host").value.trim();
    const params = new URLSearchParams({ limit: "500", sort: $("cache-sort").value });
    if (query) params.set("q", query);
    if (host) params.set("host", host);
    try {
      const response = await fetch("/cache?" + params);
      const rows = await response.json();
      if (!response.ok) throw new Error(rows.error || response.status);
      state.cacheRows = host && query ? rows.filter((r) => r.host === host.toLowerCase()) : rows;
      const body = document.createDocumentFragment();
      for (const entry of state.cacheRows) {
        body.append(el("tr", { "data-id": entry.id, class: entry.id === state.entryPicked ? "picked" : null },
          el("td", { text: entry.url, title: entry.url }), el("td", { class: "s" + Math.floor(entry.status / 100), text: entry.status }),
          el("td", { class: "num", text: size(entry.size) }), el("td", { class: "num", text: entry.hits }),
          el("td", { class: "num", text: entry.age + " s" }), el("td", {}, tag(entry.fresh ? "fresh" : "stale", entry.fresh ? "hit" : "failed"),
            entry.shared ? tag("shared", "hit") : "")));
      }
      $("cache-table").tBodies[0].replaceChildren(body);
      $("cache-count").textContent = state.cacheRows.length + " entries";
    } catch (error) { notice("The cache could not be listed: " + error.message); }
  }

  $("cache-table").tBodies[0].addEventListener("click", (click) => {
    const row = click.target.closest("tr");
    if (row) showEntry(Number(row.dataset.id));
  });
  function closeEntry() { state.entryPicked = null; $("entry").hidden = true; $("entry").replaceChildren(); }

  function freshness(entry) {
    const left = entry.lifetime - entry.age;
    return (entry.fresh ? "fresh for " + left + " s more" : "stale for " + (-left) + " s") +
      " (age " + entry.age + " s of a " + entry.lifetime + " s lifetime from " + entry.lifetime_source + ")";
  }

  async function showEntry(id) {
    state.entryPicked = id;
    for (const row of $("cache-table").tBodies[0].rows) row.classList.toggle("picked", Number(row.dataset.id) === id);
    const box = $("entry");
    box.hidden = false;
    box.replaceChildren(el("p", { class: "muted", text: "loading…" }));
    let entry;
    try {
      const response = await fetch("/cache/" + id);
      entry = await response.json();
      if (!response.ok) throw new Error(entry.error || response.status);
    } catch (error) { box.replaceChildren(el("p", { text: "Gone: " + error.message })); return; }
    const facts = el("dl", {});
    const add = (name, value) => { if (value != null && value !== "") facts.append(el("dt", { text: name }), el("dd", { text: String(value) })); };
    add("status", entry.status);
    add("freshness", freshness(entry));
    add("stored", entry.stored_at);
    add("last used", entry.last_access);
    add("hits", entry.hits);
    add("size", size(entry.size));
    add("ETag", entry.etag);
    add("Last-Modified", entry.last_modified);
    add("rule", entry.rule || "(defaults)");
    if (entry.tiers) add("tiers", entry.tiers.join(" and ") + (entry.shared === null ? " (the shared tier did not answer)" : ""));
    if (entry.ttl_override != null) add("rule ttl", entry.ttl_override + " s");
    add("variant", entry.variant || "(no Vary)");
    if (entry.variants && entry.variants.length > 1) add("variants", entry.variants.map((v) => "#" + v.id + " " + (v.variant || "(none)")).join(", "));
    if (entry.decision) add("last decision", (entry.decision.stored ? "stored" : "not stored: " + entry.decision.reason) +
      " at " + new Date(entry.decision.time * 1000).toLocaleString());
    const body = el("div", { class: "body" });
    box.replaceChildren(
      el("h2", { text: entry.url }),
      el("div", { class: "actions" },
        el("button", { class: "danger", text: "Purge", onclick: async () => {
          if (!(await confirmAction("Purge " + entry.url + " (every variant)?"))) return;
          try {
            const response = await admin("/cache/" + entry.id, { method: "DELETE" });
            const answer = await response.json();
            if (!response.ok) throw new Error(answer.error || response.status);
            notice("Purged " + entry.url + ".");
            closeEntry();
            loadCache();
          } catch (error) { notice(error.message); }
        } }),
        el("button", { text: "HAR", onclick: () => downloadHar([cacheHar(entry)], "sluice-entry-" + entry.id + ".har") }),
        el("button", { class: "quiet", text: "Close", onclick: closeEntry })),
      facts, el("h3", { text: "Stored header fields" }), fieldsTable(entry.headers), el("h3", { text: "Body" }), body);
    preview(body, "/cache/" + entry.id + "/body", "entry-" + entry.id);
  }

  // ---- overview ----
  let overviewTimer = null;
  // ---- compose and resend ----
  // Header fields Sluice sets itself, or that belong to the hop the listed exchange came on.
  const NOT_RESENT = new Set(["content-length", "transfer-encoding", "connection", "proxy-connection",
    "proxy-authorization", "keep-alive", "te", "upgrade"]);
  function openComposer(exchange) {
    $("composer").hidden = false;
    if (exchange) {
      $("compose-method").value = exchange.method;
      $("compose-url").value = exchange.url;
      $("compose-headers").value = (exchange.request_headers || [])
        .filter(([name]) => !NOT_RESENT.has(name.toLowerCase()))
        .map(([name, value]) => name + ": " + value).join("\n");
      $("compose-body").value = "";
      $("compose-repeat").value = "1";
      $("compose-note").textContent = "Edit and send again. The request's body is not kept with a listed exchange: write it here if it had one.";
    }
    $("compose-url").focus();
  }
  // Resend ×N: the exchange's request as the composer holds it, sent N times in a row at once.
  // A request that had a body (not kept with the listed exchange) waits in the composer for it.
  function resendTimes(exchange, times) {
    openComposer(exchange);
    $("compose-repeat").value = String(Math.max(1, Math.min(100, times || 1)));
    const hadBody = (exchange.request_headers || []).some(([name, value]) =>
      /^transfer-encoding$/i.test(name) || (/^content-length$/i.test(name) && Number(value) > 0));
    if (hadBody) {
      $("compose-note").textContent = "This request had a body, which is not kept with a listed exchange: write it, then Send (×" + $("compose-repeat").value + ").";
      $("compose-body").focus();
      return;
    }
    $("composer").requestSubmit();
  }
  $("live-compose").addEventListener("click", () => openComposer(null));
  $("compose-close").addEventListener("click", () => { $("composer").hidden = true; });
  $("composer").addEventListener("submit", async (event) => {
    event.preventDefault();
    const headers = [];
    for (const line of $("compose-headers").value.split("\n")) {
      if (!line.trim()) continue;
      const colon = line.indexOf(":");
      if (colon < 1) { notice("A header line needs Name: value: " + line); return; }
      headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    const draft = { method: $("compose-method").value, url: $("compose-url").value.trim(), headers,
      body: $("compose-body").value, repeat: Math.max(1, Math.min(100, Number($("compose-repeat").value) || 1)) };
    const result = $("compose-result");
    result.replaceChildren(el("span", { class: "muted", text: "sending…" }));
    try {
      const response = await admin("/compose", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(draft) });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.status);
      const rows = answer.results.map((r) => el("tr", {},
        el("td", { class: "num", text: String(r.id) }),
        el("td", { class: "s" + Math.floor(r.status / 100), text: String(r.status) }),
        el("td", { text: (r.headers.find(([n]) => n.toLowerCase() === "cache-status") || ["", ""])[1] }),
        el("td", { class: "num", text: size(r.body_size) }),
        el("td", { class: "num", text: r.duration_ms.toFixed(1) })));
      const last = answer.results[answer.results.length - 1];
      const preview = last.body !== undefined ? last.body : "(binary, " + size(last.body_size) + ")";
      result.replaceChildren(
        el("table", { class: "compose-results" },
          el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "status" }), el("th", { text: "cache" }),
            el("th", { class: "num", text: "size" }), el("th", { class: "num", text: "ms" }))),
          el("tbody", {}, ...rows)),
        el("pre", { class: "body-text", text: preview.slice(0, 65536) }));
    } catch (error) {
      result.replaceChildren(el("span", { class: "error", text: error.message }));
    }
  });

  // ---- paused at a breakpoint ----
  // The list is read every second (cheap: usually empty, and each body cut to its first KiB);
  // the item picked is read whole (`full`) for the editor, which keeps what the person typed.
  const paused = { items: [], picked: null, full: null, checkTimer: null };
  const pickedItem = () => (paused.full && paused.full.id === paused.picked ? paused.full : null);
  async function loadPaused() {
    try {
      const items = await (await fetch("/paused")).json();
      paused.items = items;
      $("paused-count").textContent = items.length;
      if (state.view !== "paused") return;
      const points = await (await fetch("/breakpoints")).json();
      const list = $("breakpoints-list");
      const names = points.breakpoints.map((p) => p.name).join(",");
      if (list.dataset.names !== names) {
        list.dataset.names = names;
        list.replaceChildren(points.breakpoints.length ? "Breakpoints: " : "No breakpoints are set.",
          ...points.breakpoints.map((p) => el("span", { class: "breakpoint" },
            p.name + " (" + p.stage + (p.match ? " " + [p.match.methods && p.match.methods.join("|"), p.match.host, p.match.path].filter(Boolean).join(" ") : "") + ") ",
            el("button", { class: "quiet", "data-remove": p.name, title: "Remove this breakpoint", onclick: () => removeBreakpoint(p.name), text: "×" }), " ")));
      }
      const body = document.querySelector("#paused-table tbody");
      body.replaceChildren(...items.map((item) => el("tr", {
        class: paused.picked === item.id ? "picked" : null, "data-id": item.id, onclick: () => pickPaused(item.id) },
        el("td", { text: item.id }), el("td", { text: item.stage }), el("td", { text: item.breakpoint }),
        el("td", { class: "mono", text: item.message ? item.message.direction + " " + item.message.type + ": " + (item.message.body || "").slice(0, 80)
          : (item.request.method || "") + " " + (item.request.url || "") + (item.response ? " → " + item.response.status : "") }),
        el("td", { text: Math.max(0, Math.round(Date.now() / 1000 - item.since)) + " s · "
          + Math.max(0, Math.round(item.deadline - Date.now() / 1000)) + " s left" }))));
      $("paused-empty").hidden = items.length > 0;
      if (paused.picked != null && !items.some((i) => i.id === paused.picked)) {
        // Gone while being edited (its time ran out, or its client left): the editor stays with
        // what was typed, its buttons off, and says what happened.
        const gone = paused.picked;
        paused.picked = null;
        paused.full = null;
        if (!$("paused-editor").hidden) {
          $("paused-result").textContent = "#" + gone + " is no longer paused (breakpoints.timeout passed, or its client left): it went on without these edits.";
          for (const button of document.querySelectorAll("#paused-editor button")) button.disabled = true;
        }
      }
    } catch (error) { /* the next tick tries again */ }
  }
  setInterval(loadPaused, 1000);

  async function pickPaused(id) {
    // The last click wins: a slower answer for an earlier one is dropped.
    const pick = paused.pick = (paused.pick || 0) + 1;
    let item;
    try {
      const response = await fetch("/paused/" + id);
      if (pick !== paused.pick) return;
      if (response.status !== 200) { notice("#" + id + " is no longer paused."); loadPaused(); return; }
      item = await response.json();
    } catch (error) { if (pick === paused.pick) notice(error.message); return; }
    if (pick !== paused.pick) return;
    paused.picked = id;
    paused.full = item;
    const message = pausedMessage(item);
    const isMessage = item.stage === "message";
    $("paused-title").textContent = "#" + item.id + " " + (isMessage ? item.message.direction + " " + item.message.type + " message" : item.stage) +
      " paused at " + item.breakpoint + (isMessage ? " (" + item.request.url + ")" : "");
    const isRequest = item.stage === "request";
    $("paused-method-label").hidden = $("paused-url-label").hidden = !isRequest;
    $("paused-status-label").hidden = isMessage;
    $("paused-headers").parentElement.hidden = isMessage;
    $("paused-answer").textContent = isMessage ? "Inject this ahead of it" : "Answer with this";
    $("paused-abort").textContent = isMessage ? "Drop it" : "Abort (502)";
    $("paused-status-label").firstChild.textContent = isRequest ? "Status (to answer) " : "Status ";
    $("paused-method").value = item.request.method || "";
    $("paused-url").value = item.request.url || "";
    $("paused-status").value = item.response ? item.response.status : 200;
    $("paused-headers").value = (message.headers || []).map(([n, v]) => n + ": " + v).join("\n");
    $("paused-body").value = message.body_base64 != null ? "" : message.body || "";
    $("paused-body").disabled = message.body_base64 != null;
    $("paused-body").placeholder = message.body_base64 != null ? "binary body (" + Math.floor(message.body_base64.replace(/=+$/, "").length * 3 / 4) + " bytes): kept as it is" : "";
    $("paused-result").textContent = "";
    for (const button of document.querySelectorAll("#paused-editor button")) button.disabled = false;
    $("paused-editor").hidden = false;
    for (const row of document.querySelectorAll("#paused-table tbody tr")) row.classList.toggle("picked", row.dataset.id == id);
    checkPaused();
  }

  function pausedMessage(item) {
    return item.stage === "response" ? item.response : item.stage === "message" ? item.message : item.request;
  }

  // JSON re-indented without being parsed: numbers, escapes and key order stay as written
  // (JSON.parse would round 12345678901234567890 and turn 1.10 into 1.1). Text that is not a
  // JSON object or array comes back as it is.
  function prettyIfJSON(text) {
    const start = text.trimStart()[0];
    if (start !== "{" && start !== "[") return text;
    let out = "", depth = 0, inString = false;
    const newline = () => "\n" + "  ".repeat(depth);
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        out += c;
        if (c === "\\") { out += text[++i] ?? ""; } else if (c === '"') inString = false;
        continue;
      }
      if (c === " " || c === "\n" || c === "\r" || c === "\t") continue;
      if (c === '"') { inString = true; out += c; }
      else if (c === "{" || c === "[") {
        const close = c === "{" ? "}" : "]";
        let j = i + 1;
        while (j < text.length && " \n\r\t".includes(text[j])) j++;
        if (text[j] === close) { out += c + close; i = j; continue; }
        depth++; out += c + newline();
      }
      else if (c === "}" || c === "]") { depth = Math.max(0, depth - 1); out += newline() + c; }
      else if (c === ",") out += "," + newline();
      else if (c === ":") out += ": ";
      else out += c;
    }
    return inString || depth !== 0 ? text : out;
  }

  // Text without the whitespace between JSON tokens (strings kept whole): two bodies that differ
  // only in layout squeeze to the same text.
  function squeezed(text) {
    let out = "", inString = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        out += c;
        if (c === "\\") { out += text[++i] ?? ""; } else if (c === '"') inString = false;
      } else if (c === '"') { inString = true; out += c; }
      else if (!" \n\r\t".includes(c)) out += c;
    }
    return out;
  }

  // Whether the body field says something else than the message's body (not only its layout).
  function bodyEdited(body, original) {
    if (body === original) return false;
    const start = original.trimStart()[0];
    return !(start === "{" || start === "[") || squeezed(body) !== squeezed(original);
  }

  // The edits as the API takes them; only what changed is sent.
  function pausedEdit(item, answering) {
    const message = pausedMessage(item);
    const edit = {};
    if (item.stage === "message") {
      const body = $("paused-body").value;
      if (answering || bodyEdited(body, message.body || "")) {
        edit.body = body;  // as written
        edit.type = message.type;
      }
      return edit;
    }
    const headers = [];
    for (const line of $("paused-headers").value.split("\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    const original = (message.headers || []).map(([n, v]) => n + ": " + v).join("\n");
    if (answering || headers.map(([n, v]) => n + ": " + v).join("\n") !== original) edit.headers = headers;
    const body = $("paused-body").value;
    if (!$("paused-body").disabled) {
      // As written; a change of layout only (the Pretty button) keeps the original bytes.
      if (bodyEdited(body, message.body || "")) edit.body = body;
      else if (answering) edit.body = message.body || "";
    }
    if (item.stage === "request" && !answering) {
      if ($("paused-method").value !== item.request.method) edit.method = $("paused-method").value;
      if ($("paused-url").value !== item.request.url) edit.url = $("paused-url").value;
    } else {
      const status = Number($("paused-status").value);
      if (answering || (item.response && status !== item.response.status)) edit.status = status;
    }
    return edit;
  }

  function checkPaused() {
    clearTimeout(paused.checkTimer);
    paused.checkTimer = setTimeout(async () => {
      const item = pickedItem();
      const box = $("paused-contract");
      if (!item || !item.contract_rule) { box.textContent = ""; return; }
      try {
        const response = await admin("/paused/" + item.id + "/check", { method: "POST", body: JSON.stringify(pausedEdit(item, false)) });
        const verdict = await response.json();
        if (verdict.outcome === "failed") {
          box.replaceChildren(el("span", { class: "failed", text: "Contract of rule " + item.contract_rule + ": " + verdict.failure.violations_total + " violation(s)" }),
            el("ul", {}, ...verdict.failure.violations.map((v) => el("li", { class: "mono",
              text: (v.pointer || "(root)") + " " + (v.keyword || "") + ": expected " + (v.expected || "") + ", found " + (v.found || "") }))));
        } else {
          box.replaceChildren(el("span", { class: verdict.outcome === "passed" ? "passed" : "", text: "Contract of rule " + item.contract_rule + ": " + verdict.outcome + (verdict.detail ? " (" + verdict.detail + ")" : "") }));
        }
      } catch (error) { box.textContent = error.message; }
    }, 250);
  }
  for (const id of ["paused-body", "paused-headers", "paused-status", "paused-method", "paused-url"]) $(id).addEventListener("input", checkPaused);
  $("paused-pretty").addEventListener("click", () => { $("paused-body").value = prettyIfJSON($("paused-body").value); });

  async function decidePaused(action, payload) {
    const item = pickedItem();
    if (!item) return;
    try {
      const response = await admin("/paused/" + item.id + "/" + action, { method: "POST", body: JSON.stringify(payload) });
      const answer = await response.json();
      if (response.status !== 200) { $("paused-result").textContent = answer.error || ("HTTP " + response.status); return; }
      $("paused-result").textContent = "";
      $("paused-editor").hidden = true;
      paused.picked = null;
      paused.full = null;
      notice("#" + item.id + " " + action + (action === "abort" && payload.close ? " (connection closed)" : "") + ".");
      loadPaused();
    } catch (error) { $("paused-result").textContent = error.message; }
  }
  $("paused-resume").addEventListener("click", () => {
    const item = pickedItem();
    if (item) decidePaused("resume", pausedEdit(item, false));
  });
  $("paused-answer").addEventListener("click", () => {
    const item = pickedItem();
    if (item) decidePaused("answer", pausedEdit(item, true));
  });
  // Breakpoints added and removed from the page (PUT / DELETE /breakpoints/{name}).
  $("bp-add").addEventListener("click", async () => {
    const name = $("bp-name").value.trim();
    const spec = { stage: $("bp-stage").value };
    const match = {};
    if ($("bp-host").value.trim()) match.host = $("bp-host").value.trim();
    if ($("bp-path").value.trim()) match.path = $("bp-path").value.trim();
    if ($("bp-method").value.trim()) match.methods = [$("bp-method").value.trim()];
    if (Object.keys(match).length) spec.match = match;
    if ($("bp-contains").value) spec.body_contains = $("bp-contains").value;
    try {
      const response = await admin("/breakpoints/" + encodeURIComponent(name), { method: "PUT", body: JSON.stringify(spec) });
      const answer = await response.json();
      if (response.status !== 200) { notice("Not added: " + (answer.error || response.status)); return; }
      notice("Breakpoint " + name + " added.");
      loadPaused();
    } catch (error) { notice(error.message); }
  });
  async function removeBreakpoint(name) {
    try {
      const response = await admin("/breakpoints/" + encodeURIComponent(name), { method: "DELETE" });
      if (response.status === 200) notice("Breakpoint " + name + " removed.");
      loadPaused();
    } catch (error) { notice(error.message); }
  }
  $("paused-abort").addEventListener("click", () => decidePaused("abort", { close: false }));
  $("paused-close").addEventListener("click", () => decidePaused("abort", { close: true }));

  // ---- devices on the LAN ----
  async function loadDevices() {
    try {
      const device = await (await fetch("/device")).json();
      $("device-qr").src = "/device/qr.svg?" + Date.now();
      const facts = $("device-facts");
      facts.replaceChildren();
      const fact = (name, ...value) => facts.append(el("dt", { text: name }), el("dd", {}, ...value));
      fact("Onboarding URL", el("a", { href: device.onboarding_url, text: device.onboarding_url, id: "device-url", target: "_blank", rel: "noopener" }));
      fact("Proxy address", device.lan_addresses.length ? device.lan_addresses.join(", ") : device.listen + " (this computer only)");
      fact("Credentials", device.credentials ? "user " + device.credentials.user + ", the password in " + device.credentials.password_file : "none asked");
      fact("Allowed clients", !device.reachable_from_lan ? "this computer only"
        : device.allow_clients.length ? device.allow_clients.join(", ")
        : device.credentials ? "any with the user and password" : "any that reaches it");
      fact("HTTPS", device.intercepting ? "intercepted for the listed hosts: the device must trust the CA" : "not intercepted (no CA needed)");
      if (device.ca) fact("CA", device.ca.subject, el("br"), el("span", { class: "mono fingerprint", text: "SHA-256 " + device.ca.sha256 }));
      $("device-lan-hint").hidden = device.reachable_from_lan;
      const port = String(device.listen).split(":").pop();
      $("device-hint-listen").textContent = "listen: 0.0.0.0:" + port;
    } catch (error) { notice("The device panel could not be read: " + error.message); }
  }

  function loadOverview() {
    if (overviewTimer) return;
    const tick = async () => {
      if (state.view !== "overview") { clearInterval(overviewTimer); overviewTimer = null; return; }
      try {
        const [series, health, stats, rules, contracts] = await Promise.all(["/series?seconds=300", "/health", "/stats", "/rules", "/contracts"].map((u) => fetch(u).then((r) => r.json())));
        drawOverview(series, health, stats);
        drawRules(rules, stats.faults || {});
        drawCoverage(contracts);
      } catch (error) { notice("The overview could not be read: " + error.message); }
    };
    tick();
    overviewTimer = setInterval(tick, 2000);
  }

  function chart(canvas, lines, options = {}) {
    if (canvas.clientWidth && canvas.width !== canvas.clientWidth) canvas.width = canvas.clientWidth;
    const context = canvas.getContext("2d");
    const width = canvas.width, height = canvas.height;
    context.clearRect(0, 0, width, height);
    const values = lines.flatMap((line) => line.values.filter((v) => v != null));
    const top = options.max || Math.max(1, ...values);
    context.fillStyle = "#6b7485";
    context.font = "11px system-ui";
    context.fillText(String(Math.round(top * 10) / 10), 2, 11);
    context.strokeStyle = "#eef1f5";
    context.beginPath(); context.moveTo(0, height - 1); context.lineTo(width, height - 1); context.stroke();
    for (const line of lines) {
      context.strokeStyle = line.color;
      context.lineWidth = 1.5;
      context.beginPath();
      let started = false;
      line.values.forEach((value, index) => {
        if (value == null) { started = false; return; }
        const x = (index / Math.max(1, line.values.length - 1)) * (width - 2) + 1;
        const y = height - 2 - (value / top) * (height - 16);
        if (started) context.lineTo(x, y); else { context.moveTo(x, y); started = true; }
      });
      context.stroke();
    }
  }

  function drawOverview(series, health, stats) {
    state.proxy = health.listen;
    chart($("chart-requests"), [{ values: series.requests, color: "#1d5c9b" }]);
    chart($("chart-hits"), [{ values: series.requests.map((r, i) => r ? 100 * series.hits[i] / r : null), color: "#2e7d32" }], { max: 100 });
    chart($("chart-classes"), [
      { values: series["2xx"], color: "#2e7d32" }, { values: series["3xx"], color: "#1d5c9b" },
      { values: series["4xx"], color: "#b26a00" }, { values: series["5xx"], color: "#c62828" }]);
    chart($("chart-validation"), [
      { values: series.validation_failures, color: "#b26a00" },
      { values: series.contract_failures || [], color: "#c62828" }]);
    const list = $("health");
    const rows = [
      ["status", health.status], ["listening on", health.listen], ["uptime", health.uptime_s + " s"],
      ["connections", health.connections], ["cache", health.cache],
      ["upstream reachable", health.upstream.reachable ? "yes" : "no"],
      ["recent upstream attempts", health.upstream.recent_attempts + " (" + health.upstream.recent_failures + " failed)"],
      ["last success", health.upstream.last_success ? new Date(health.upstream.last_success * 1000).toLocaleString() : "—"],
      ["last failure", health.upstream.last_failure ? new Date(health.upstream.last_failure.time * 1000).toLocaleString() + ": " + health.upstream.last_failure.error : "—"],
      ["requests", stats.requests], ["errors", stats.errors],
      ["cache hits / stores", (stats.cache.hits ?? 0) + " / " + (stats.cache.stores ?? 0)],
      ["cache size", size(stats.cache.bytes) + (stats.cache.capacity ? " of " + size(stats.cache.capacity) : "")],
      ["validation rejected / reported", stats.validation.rejected + " / " + stats.validation.reported],
    ];
    const contracts = stats.contracts || { checked: 0, failed: 0, rejected: 0, rules: [] };
    rows.push(["contract checks / failed / rejected", contracts.checked + " / " + contracts.failed + " / " + contracts.rejected]);
    for (const c of contracts.rules) {
      rows.push(["contract of rule " + c.rule, c.kind === "openapi"
        ? c.operations + " operations, " + c.with_response_schemas + " with response schemas, " + c.warnings + " warnings · checked " + c.checked + ", failed " + c.failed + (c.rejected ? ", rejected " + c.rejected : "")
        : "JSON Schema · checked " + c.checked + ", failed " + c.failed + (c.rejected ? ", rejected " + c.rejected : "")]);
    }
    list.replaceChildren(...rows.flatMap(([name, value]) => [el("dt", { text: name }), el("dd", { text: String(value) })]));
    drawPassthrough((stats.tls && stats.tls.passthrough) || []);
  }

  // ---- contract coverage: seen operations × statuses, then the documented ones never seen ----
  function drawCoverage(report) {
    const rows = [];
    for (const rule of report.rules) {
      for (const c of rule.seen) {
        rows.push(el("tr", { class: c.broken ? "broken" : "" }, el("td", { text: rule.name }), el("td", { text: c.operation }),
          el("td", { text: c.status }), el("td", { text: String(c.exchanges) }), el("td", { text: String(c.validated) }),
          el("td", { class: c.broken ? "failed" : "", text: String(c.broken) })));
      }
      for (const n of rule.never_seen) {
        rows.push(el("tr", { class: "never-seen muted" }, el("td", { text: rule.name }), el("td", { text: n.operation }),
          el("td", { text: n.statuses.join(", ") }), el("td", { text: "never seen" }), el("td", { text: "" }), el("td", { text: "" })));
      }
    }
    $("coverage-empty").hidden = report.rules.length > 0;
    $("coverage-table").querySelector("tbody").replaceChildren(...rows);
  }

  // ---- TLS passthrough windows ----
  function drawPassthrough(windows) {
    $("passthrough-empty").hidden = windows.length > 0;
    $("passthrough-clear-all").hidden = windows.length === 0;
    $("passthrough-table").querySelector("tbody").replaceChildren(...windows.map((w) => el("tr", {},
      el("td", { text: w.host }), el("td", { text: w.client }), el("td", { class: "mono", text: w.fingerprint }),
      el("td", { text: new Date(w.until * 1000).toLocaleTimeString() + " (" + w.remaining_seconds + " s)" }),
      el("td", {}, el("button", { class: "quiet passthrough-clear", text: "Clear", onclick: () => clearPassthrough(w.host) })))));
  }
  async function clearPassthrough(host) {
    try {
      const response = await admin("/tls/passthrough" + (host ? "?host=" + encodeURIComponent(host) : ""), { method: "DELETE" });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.status);
      notice("Ended " + answer.cleared + " passthrough window(s)" + (host ? " for " + host : "") + ": those clients are intercepted again.");
      const stats = await (await fetch("/stats")).json();
      drawPassthrough(stats.tls.passthrough || []);
    } catch (error) { notice(error.message); }
  }
  $("passthrough-clear-all").addEventListener("click", () => clearPassthrough(null));

  // ---- rules: mappings and faults, with the faults' switches ----
  function drawRules(rules, counts) {
    const shown = rules.filter((r) => r.respond || r.upstream || r.rewrite || r.faults);
    $("rules-empty").hidden = shown.length > 0;
    $("rules-table").querySelector("tbody").replaceChildren(...shown.map((rule) => {
      const does = [rule.respond ? "map local" : null, rule.upstream ? "map remote → " + rule.upstream : null,
        rule.rewrite ? "rewrite" : null].filter(Boolean).join(", ") || "—";
      const injected = Object.entries(counts[rule.name] || {}).filter(([, n]) => n > 0).map(([kind, n]) => kind + " " + n).join(", ");
      const toggle = rule.faults
        ? el("button", { class: "quiet faults-toggle", text: rule.faults_enabled ? "Switch off" : "Switch on",
            onclick: () => switchFaults(rule.name, !rule.faults_enabled) })
        : el("span", { class: "muted", text: "—" });
      return el("tr", { "data-rule": rule.name }, el("td", { text: rule.name }), el("td", { text: does }),
        el("td", { class: "faults-state", text: rule.faults ? (rule.faults_enabled ? "on" : "off") : "none" }),
        el("td", { text: injected || "—" }), el("td", {}, toggle));
    }));
  }
  async function switchFaults(name, enabled) {
    try {
      const response = await admin("/rules/" + encodeURIComponent(name) + "/faults?enabled=" + enabled, { method: "PUT" });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.status);
      notice("Faults of " + name + " switched " + (enabled ? "on" : "off") + " (until the next reload).");
      const [rules, stats] = await Promise.all(["/rules", "/stats"].map((u) => fetch(u).then((r) => r.json())));
      drawRules(rules, stats.faults || {});
    } catch (error) { notice(error.message); }
  }

  // The proxy's address, for "Copy as curl".
  fetch("/health").then((r) => r.json()).then((health) => { state.proxy = health.listen; }).catch(() => {});
  connect();
})();
