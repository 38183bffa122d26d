// Twilight table companion: keeps the score page live and sends the table controls.
// No libraries. Live updates: server-sent events (/api/events), polling /api/version
// while they are down; the page parts are re-rendered by the server (/part/<name>).
(function () {
  "use strict";
  var body = document.body;
  var app = document.getElementById("app");
  var live = document.getElementById("live");
  var offline = document.getElementById("offline");
  var toastEl = document.getElementById("toast");
  var state = {
    version: app ? Number(app.dataset.version) : -1,
    boot: app ? app.dataset.boot : "",
    source: null,
    pollTimer: null,
    refreshing: false,
    again: false,
    retry: 1000
  };

  function csrf() { return body.dataset.csrf || ""; }

  function toast(message, bad) {
    if (!toastEl) return;
    toastEl.textContent = message;
    toastEl.className = "toast" + (bad ? " bad" : "");
    toastEl.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { toastEl.hidden = true; }, bad ? 6000 : 2500);
  }

  // The connection: "live" (events) and "polling" are connected; anything else is not,
  // and after a moment's grace (a stream's planned reconnect takes less) the page says
  // so plainly: a banner at every width, the camera status greyed as not live.
  var GRACE_MS = 2500;
  function setLive(s) {
    if (live) { live.dataset.state = s; live.querySelector(".txt").textContent = s; }
    var connected = s === "live" || s === "polling";
    if (connected) {
      clearTimeout(setLive.timer);
      setLive.timer = null;
      body.classList.remove("disconnected");
      if (offline) offline.hidden = true;
    } else if (!setLive.timer && !body.classList.contains("disconnected")) {
      setLive.timer = setTimeout(function () {
        setLive.timer = null;
        body.classList.add("disconnected");
        if (offline) offline.hidden = false;
      }, GRACE_MS);
    }
  }

  // -- re-rendering parts ----------------------------------------------------------------
  function swap(name) {
    var el = document.getElementById("part-" + name);
    if (!el) return Promise.resolve();
    if (name === "table" && el.contains(document.activeElement) &&
        /INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName)) {
      return Promise.resolve();  // someone is typing there: keep it
    }
    return fetch("/part/" + name, { cache: "no-cache", credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        var v = r.headers.get("X-State-Version");
        return r.text().then(function (html) {
          if (el.innerHTML !== html) {
            var open = name === "table" ? el.querySelector("details[open]") : null;
            el.innerHTML = html;
            var d = el.querySelector("details");
            if (open && d) d.open = true;
          }
          if (v !== null) state.version = Math.max(state.version, Number(v));
        });
      });
  }

  function refresh() {
    if (!app) return Promise.resolve();
    if (state.refreshing) { state.again = true; return Promise.resolve(); }
    state.refreshing = true;
    return Promise.all([swap("score"), swap("table")])
      .catch(function () { /* the next event or poll tries again */ })
      .then(function () {
        state.refreshing = false;
        if (state.again) { state.again = false; refresh(); }
      });
  }

  function seen(version, boot) {
    if (boot !== state.boot) { state.boot = boot; state.version = -1; }
    if (version !== state.version) { state.version = version; refresh(); }
  }

  // -- live updates ----------------------------------------------------------------------
  function poll() {
    fetch("/api/version", { cache: "no-store" }).then(function (r) { return r.json(); })
      .then(function (d) {
        if (!live || live.dataset.state !== "live") setLive("polling");
        seen(d.version, d.boot);
      })
      .catch(function () { setLive("offline"); });
  }

  function startPolling() {
    if (!state.pollTimer) state.pollTimer = setInterval(poll, 1000);
  }

  function stopPolling() {
    if (state.pollTimer) { clearInterval(state.pollTimer); state.pollTimer = null; }
  }

  function connect() {
    if (!app) return;
    if (state.source) state.source.close();
    if (!window.EventSource) { startPolling(); setLive("polling"); return; }
    var es = new EventSource("/api/events");
    state.source = es;
    es.onopen = function () { setLive("live"); stopPolling(); state.retry = 1000; };
    es.onmessage = function (e) {
      setLive("live");
      stopPolling();
      try { var d = JSON.parse(e.data); seen(d.version, d.boot); } catch (err) { /* ignore */ }
    };
    es.addEventListener("bye", function () { es.close(); connect(); });
    es.onerror = function () {
      setLive("reconnecting");
      startPolling();
      if (es.readyState === 2) {  // refused (e.g. too many pages): poll, retry later
        setTimeout(connect, state.retry);
        state.retry = Math.min(30000, state.retry * 2);
      }
    };
  }

  // A page in the background gives its server thread back; it catches up when seen.
  document.addEventListener("visibilitychange", function () {
    if (!app) return;
    if (document.visibilityState === "hidden") {
      if (state.source) { state.source.close(); state.source = null; }
      stopPolling();
    } else {
      refresh();
      connect();
    }
  });

  // -- controls --------------------------------------------------------------------------
  function send(url, data) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf(), "Accept": "application/json" },
      body: JSON.stringify(data)
    }).then(function (r) {
      return r.json().catch(function () { return { error: "HTTP " + r.status }; })
        .then(function (d) { if (!r.ok) throw new Error(d.message || d.error || ("HTTP " + r.status)); return d; });
    });
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.hasAttribute || !form.hasAttribute("data-api")) return;
    e.preventDefault();
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    var data = {};
    new FormData(form).forEach(function (value, key) {
      if (key !== "csrf_token" && key !== "next") data[key] = value;
    });
    var button = form.querySelector("button");
    if (button) button.disabled = true;
    send(form.getAttribute("action"), data).then(function (d) {
      if (d.csrf) body.dataset.csrf = d.csrf;
      if (form.hasAttribute("data-reload")) { window.location.reload(); return; }
      toast("Done");
      return refresh();
    }).catch(function (err) {
      toast(err.message, true);
    }).then(function () { if (button) button.disabled = false; });
  });

  // Correcting a played card: choose among the cards still possible there.
  var dialog = document.getElementById("fix");
  document.addEventListener("click", function (e) {
    var btn = e.target.closest && e.target.closest("[data-fix]");
    if (btn && dialog) {
      var index = Number(btn.dataset.fix);
      fetch("/api/choices/" + index, { cache: "no-store" }).then(function (r) {
        return r.json().then(function (d) { if (!r.ok) throw new Error(d.error); return d; });
      }).then(function (d) { openFix(d); }).catch(function (err) { toast(err.message, true); });
      return;
    }
    var choice = e.target.closest && e.target.closest("[data-card]");
    if (choice && dialog && dialog.contains(choice)) {
      e.preventDefault();
      fixError("");
      send("/api/correct", { index: Number(dialog.dataset.index), card: choice.dataset.card })
        .then(function () { dialog.close(); toast("Corrected"); return refresh(); })
        .catch(function (err) { fixError(err.message); });  // shown in the dialog, on top
      return;
    }
    // Naming a gap (a card the camera could not read): one tap on the card that lies there.
    var gap = e.target.closest && e.target.closest("[data-gap-card]");
    if (gap) {
      e.preventDefault();
      gap.disabled = true;
      send("/api/correct", { index: Number(gap.dataset.gapIndex), card: gap.dataset.gapCard })
        .then(function () { toast("Named"); return refresh(); })
        .catch(function (err) { toast(err.message, true); gap.disabled = false; });
    }
  });

  // A refusal inside the open dialog: the dialog sits above the page (and its toast),
  // so the message is shown in it, at its top, in the rules' plain words.
  function fixError(message) {
    var el = document.getElementById("fix-error");
    if (!el) { if (message) toast(message, true); return; }
    el.textContent = message;
    el.hidden = !message;
  }

  function openFix(d) {
    fixError("");
    dialog.dataset.index = d.index;
    document.getElementById("fix-title").textContent =
      "Correct play " + d.index + " (" + d.seat + ", now " + (d.card ? d.card.replace(/-/g, " ") : "not read yet") + ")";
    var box = document.getElementById("fix-choices");
    box.textContent = "";
    d.choices.forEach(function (c) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "card " + c.cult + " " + c.kind + (c.id === d.card ? " current" : "");
      b.dataset.card = c.id;
      b.title = c.cult + " " + c.name;
      var s = document.createElement("b"); s.textContent = c.short;
      var n = document.createElement("i"); n.textContent = c.name;
      b.appendChild(s); b.appendChild(n);
      box.appendChild(b);
    });
    if (dialog.showModal) dialog.showModal(); else dialog.setAttribute("open", "");
  }

  // Setup: refresh the camera picture once the last one has loaded.
  var cam = document.querySelector("img[data-refresh]");
  if (cam) {
    var every = Number(cam.dataset.refresh) || 1000;
    var next = function () {
      setTimeout(function () { cam.src = "/setup/camera.jpg?t=" + Date.now(); }, every);
    };
    cam.addEventListener("load", next);
    cam.addEventListener("error", next);
  }

  connect();
})();
