/* hermes web UI: progressive enhancement. Every button is a form that works without this
   file; with it, actions happen without a page reload (the page keeps its place), each with
   an Undo, and the keyboard drives the feed: j/k move, o opens, l/d like/dislike, r read,
   s save, u undo, / search, ? help. Served from this machine (the CSP allows no other
   script, and nothing here is inline). */
(function () {
  "use strict";

  var current = null;
  var lastUndo = null;
  var toastTimer = null;

  function csrf() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  function cards() {
    return Array.prototype.slice.call(document.querySelectorAll("article.item"));
  }

  function card(id) {
    return document.getElementById("item-" + id);
  }

  // --- the current item ------------------------------------------------------------------

  function setCurrent(el) {
    if (!el) return;
    if (current) current.classList.remove("is-current");
    current = el;
    el.classList.add("is-current");
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest", behavior: "auto" });
  }

  function move(step) {
    var all = cards();
    if (!all.length) return;
    var at = current ? all.indexOf(current) : -1;
    var next = at < 0 ? (step > 0 ? 0 : all.length - 1) : at + step;
    next = Math.max(0, Math.min(all.length - 1, next));
    setCurrent(all[next]);
  }

  function nextAfter(el) {
    var all = cards();
    var at = all.indexOf(el);
    return at >= 0 && at + 1 < all.length ? all[at + 1] : null;
  }

  // --- messages ----------------------------------------------------------------------------

  function field(form, name, value) {
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    form.appendChild(input);
  }

  function undoForm(undo) {
    var form = document.createElement("form");
    form.method = "post";
    form.action = undo.action;
    form.className = "inline";
    form.setAttribute("data-ajax", "");
    form.setAttribute("data-undo", "");
    field(form, "csrf_token", csrf());
    Object.keys(undo.fields || {}).forEach(function (k) { field(form, k, undo.fields[k]); });
    field(form, "next", location.pathname + location.search);
    var button = document.createElement("button");
    button.type = "submit";
    button.className = "btn btn-small btn-undo";
    button.textContent = undo.label || "Undo";
    form.appendChild(button);
    return form;
  }

  function toast(kind, message, undo) {
    var region = document.getElementById("toasts");
    if (!region) return;
    region.textContent = "";
    var box = document.createElement("div");
    box.className = "toast toast-" + (kind || "ok");
    box.setAttribute("role", "status");
    var text = document.createElement("span");
    text.className = "toast-message";
    text.textContent = message;
    box.appendChild(text);
    lastUndo = null;
    if (undo) {
      lastUndo = undoForm(undo);
      box.appendChild(lastUndo);
    }
    region.appendChild(box);
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { box.classList.add("is-fading"); }, 12000);
  }

  // --- applying an answer to the page -------------------------------------------------------

  function setForm(el, selector, on, onText, offText) {
    var form = el.querySelector(selector);
    if (!form) return;
    form.querySelector('input[name="on"]').value = on ? "0" : "1";
    var button = form.querySelector("button");
    button.textContent = on ? onText : offText;
    button.classList.toggle("is-on", on && selector.indexOf("save") >= 0);
  }

  function applyRead(el, read) {
    el.classList.toggle("is-read", read);
    var badge = el.querySelector(".badge-read");
    if (badge) badge.hidden = !read;
    setForm(el, 'form[data-act="read"]', read, "Mark unread", "Mark read");
  }

  // A rating or a read changes figures beyond its card. Those the answer carries (rendered
  // by the server as a reload would render them) are put in place; the others stay as the
  // page was loaded, and say so: a note names the changes it is about ("rating read"; a
  // note that names none is about a rating).
  function applyFigures(data, change) {
    var figures = data.figures || {};
    Object.keys(figures).forEach(function (name) {
      var el = document.querySelector('[data-figure="' + name + '"]');
      if (el) el.textContent = figures[name];
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-as-loaded]"), function (note) {
      var about = (note.getAttribute("data-as-loaded") || "rating").split(" ");
      if (about.indexOf(change) >= 0) note.hidden = false;
    });
  }

  // "Mark these N read" lists the page's items still unread and unrated: after a rating or
  // a read it is listed anew from the cards, so it marks what it says (the server skips a
  // rated item too, for a page without script).
  function syncReadAll() {
    var form = document.querySelector("form[data-read-all]");
    if (!form) return;
    var ids = cards().filter(function (el) {
      return !el.classList.contains("is-read") && !el.classList.contains("is-rated");
    }).map(function (el) { return el.getAttribute("data-item-id"); });
    form.querySelector('input[name="item_ids"]').value = ids.join(",");
    form.querySelector("button").textContent = "Mark these " + ids.length + " read";
    form.hidden = !ids.length;
  }

  function apply(data) {
    var el = data.item_id ? card(data.item_id) : null;
    if (el) {
      if ("clicked" in data) {
        var rated = el.querySelector(".badge-rated");
        el.classList.toggle("is-rated", !!data.clicked);
        var unrate = el.querySelector('form[data-act="unrate"]');
        if (unrate) unrate.hidden = !data.clicked;
        if (rated) {
          rated.hidden = !data.clicked;
          rated.textContent = data.clicked === "like" ? "liked ✓" : data.clicked === "dislike" ? "disliked ✗" : "";
        }
      }
      if ("read" in data) applyRead(el, !!data.read);
      if ("saved" in data) {
        var badge = el.querySelector(".badge-saved");
        if (badge) badge.hidden = !data.saved;
        setForm(el, 'form[data-act="save"]', !!data.saved, "★ Saved", "☆ Save");
      }
    }
    (data.item_ids || []).forEach(function (id) {
      var other = card(id);
      if (other) applyRead(other, !!data.read);
    });
    if ("clicked" in data) applyFigures(data, "rating");
    else if ("read" in data) applyFigures(data, "read");
    syncReadAll();
    toast(data.kind, data.message, data.undo);
  }

  function send(form) {
    var body = new URLSearchParams(new FormData(form));
    return fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRF-Token": csrf() }
    }).then(function (response) {
      return response.json().catch(function () {
        return { ok: false, message: "The server answered " + response.status + "." };
      });
    }).catch(function () {
      return { ok: false, message: "hermes did not answer: is the server still running?" };
    });
  }

  function submitted(event) {
    var form = event.target;
    if (form.hasAttribute("data-open")) {
      if (openInTab(form)) event.preventDefault();
      else opened(form);  // no tab for script: the form opens one; this page shows it read
      return;
    }
    if (!form.hasAttribute("data-ajax")) return;
    event.preventDefault();
    var el = form.closest("article.item");
    var act = form.getAttribute("data-act");
    form.classList.add("is-busy");
    send(form).then(function (data) {
      form.classList.remove("is-busy");
      if (!data.ok) {
        toast("error", data.message || "That did not work.");
        return;
      }
      if (form.hasAttribute("data-refresh")) {
        toast(data.kind, data.message);
        watchRefresh(true);
        return;
      }
      apply(data);
      if (el && (act === "like" || act === "dislike")) setCurrent(nextAfter(el) || el);
      // an undo puts the item back where it was: the next key acts on it, not on the one
      // the ✓ or ✗ moved on to
      if (form.hasAttribute("data-undo") && data.item_id && card(data.item_id)) {
        setCurrent(card(data.item_id));
      }
    });
  }

  // The title opens the item in a new tab. Opened from here (a blank tab now, while the
  // click still counts as the person's; its address once hermes has recorded the read), the
  // answer also carries the figures the read changed: the feed's unread counts follow.
  function openInTab(form) {
    var tab = window.open("", "_blank");
    if (!tab) return false;  // refused (a pop-up blocker): the form's own target="_blank"
    tab.opener = null;  // the item's page gets no handle on this one
    var el = form.closest("article.item");
    send(form).then(function (data) {
      if (!data.ok || !data.url) {
        tab.close();
        toast("error", data.message || "That did not work.");
        return;
      }
      tab.location.replace(data.url);
      apply(data);
      if (el) setCurrent(el);
    });
    return true;
  }

  function opened(form) {
    var el = form.closest("article.item");
    var item = form.querySelector('input[name="item_id"]').value;
    var user = form.querySelector('input[name="user"]').value;
    if (el) {
      applyRead(el, true);
      setCurrent(el);
      applyFigures({}, "read");
      syncReadAll();
    }
    var title = form.querySelector("button").textContent.trim();
    toast("ok", "Opened, marked read: " + title.slice(0, 80),
      { action: "/read", label: "Undo", fields: { user: user, item_id: item, on: "0" } });
  }

  // --- the refresh progress -----------------------------------------------------------------

  var polling = false;

  function watchRefresh(started) {
    var boxes = document.querySelectorAll("[data-refresh-status]");
    if (!boxes.length || polling) return;
    polling = true;
    var seen = !!started;
    var failures = 0;
    var tick = function () {
      fetch("/api/refresh", { headers: { "Accept": "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (state) {
          failures = 0;
          var run = state.running;
          Array.prototype.forEach.call(boxes, function (box) {
            var text = box.querySelector(".refresh-text");
            var bar = box.querySelector(".refresh-progress");
            var button = box.querySelector("form[data-refresh] button");
            if (run || state.requested) {
              seen = true;
              var stage = run && run.stage === "embed" ? "embedding new items" : "fetching feeds";
              text.textContent = run && run.total ? "Refreshing: " + stage + " " + run.done + " of " + run.total + "…" : "Refresh starting…";
              bar.hidden = !(run && run.total);
              if (run && run.total) { bar.max = run.total; bar.value = run.done; }
              if (button) button.disabled = true;
            } else {
              bar.hidden = true;
              if (button) button.disabled = false;
              var last = state.last || {};
              text.textContent = state.failing ? "Refresh failed." : "Refreshed just now" + (last.new_items !== undefined ? ": " + last.new_items + " new item" + (last.new_items === 1 ? "" : "s") : "") + ".";
            }
            // that refreshing itself fails, and why, as the server words it
            var failing = box.querySelector("[data-refresh-failing]");
            if (failing) {
              failing.textContent = state.failing ? state.failing.words : "";
              failing.hidden = !state.failing;
            }
            // the failed feeds, as the server words them, linked to where the Feeds page
            // shows each error (a failure said only in the server's log goes unseen)
            var failed = box.querySelector("[data-refresh-failures]");
            var failures = state.failures || {};
            if (failed) {
              failed.textContent = failures.words || "";
              failed.href = failures.url || "/feeds";
              failed.hidden = !failures.words;
            }
          });
          if (run || state.requested) {
            setTimeout(tick, 1000);
          } else {
            polling = false;
            var arrived = state.last && state.last.new_items;
            var failedNow = state.failures && state.failures.failed;
            if (seen && (arrived || failedNow)) {
              // one toast (a second would replace the first): what arrived, what failed
              var said = arrived ? arrived + " new item" + (arrived === 1 ? "" : "s") + " arrived: reload to see them." : "";
              if (failedNow) said += (said ? " " : "") + state.failures.words + ".";
              toast(failedNow ? "error" : "ok", said);
            }
          }
        })
        .catch(function () {
          // one lost answer (the server busy or restarting) must not freeze the progress
          failures += 1;
          if (failures < 5) setTimeout(tick, 2000 * failures);
          else polling = false;
        });
    };
    tick();
  }

  // --- the keyboard ---------------------------------------------------------------------------

  function help(show) {
    var panel = document.getElementById("keys-help");
    if (!panel) return false;
    panel.hidden = show === undefined ? !panel.hidden : !show;
    return true;
  }

  function press(selector) {
    var target = current || cards()[0];
    if (!target) return;
    if (!current) setCurrent(target);
    var form = target.querySelector(selector);
    if (form) form.requestSubmit();
  }

  function open() {
    var target = current || cards()[0];
    if (!target) return;
    if (!target.querySelector("form[data-open]")) {
      // the feed gave this item no web address: say so rather than do nothing
      setCurrent(target);
      var media = target.querySelector("a.media-link");
      toast("info", "This item has no link to open" +
        (media ? ": its media file is the ▶ link beside the date." : "."));
      return;
    }
    press("form[data-open]");
  }

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function keydown(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape") {
      help(false);
      if (typing(document.activeElement)) document.activeElement.blur();
      return;
    }
    if (typing(event.target)) return;
    var handled = true;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "o": open(); break;
      case "l": press('form[data-act="like"]'); break;
      case "d": press('form[data-act="dislike"]'); break;
      case "r": press('form[data-act="read"]'); break;
      case "s": press('form[data-act="save"]'); break;
      case "u": if (lastUndo) lastUndo.requestSubmit(); break;
      case "/": {
        var box = document.querySelector('input[data-key="/"]');
        if (box) { box.focus(); box.select(); } else handled = false;
        break;
      }
      case "?": handled = help(); break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.documentElement.classList.add("js");
    document.addEventListener("submit", submitted);
    document.addEventListener("keydown", keydown);
    document.addEventListener("click", function (event) {
      var el = event.target.closest && event.target.closest("article.item");
      if (el) setCurrent(el);
      var helpLink = event.target.closest && event.target.closest('a[data-key="?"]');
      if (helpLink && help(true)) event.preventDefault();
      if (event.target.id === "keys-help") help(false);
    });
    var existing = document.querySelector("#toasts form[data-undo]");
    if (existing) lastUndo = existing;
    var target = location.hash.indexOf("#item-") === 0 ? document.querySelector(location.hash) : null;
    if (target) setCurrent(target);
    if (document.querySelector("[data-refresh-status][data-running]")) watchRefresh(false);
  });
})();
