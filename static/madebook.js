// Madebook's own script: the Attention inbox's keys (j/k move, Enter
// opens, a accepts a proposal, r goes to the resolution, x selects, b goes
// to the bulk bar, Esc closes, ? lists them), the focus after an action,
// the lines another lead acted on while they were open here, the bulk
// bar's selection, the push stream's state (the poll runs only while it
// is down), and messages for failed requests. Everything works without
// it, more slowly.
(function () {
  "use strict";

  // The push stream (htmx's SSE extension on <body>) is up between its
  // open and error events; while it is down a visible page polls instead.
  var streamUp = false;
  document.addEventListener("htmx:sseOpen", function () { streamUp = true; });
  document.addEventListener("htmx:sseError", function () { streamUp = false; });
  document.addEventListener("htmx:sseClose", function () { streamUp = false; });
  window.madebookStreamDown = function () { return !streamUp && !document.hidden; };

  // The poll: every 3 s while the stream is down, a madebook-poll event on
  // <body>, which the queue and the navigation's count listen for. (A
  // trigger filter in the markup would need eval, which the CSP forbids.)
  setInterval(function () {
    if (window.htmx && document.body && window.madebookStreamDown()) htmx.trigger(document.body, "madebook-poll");
  }, 3000);

  // A hidden or left page closes its stream: a browser holds only six
  // connections to a site, and a stream holds one for as long as it is
  // open. Shown again, the page reconnects, and the stream says at once
  // whether the queue changed meanwhile. The extension closes a stream on
  // its element's cleanup, and opens one (and listens to it) when an
  // element is processed.
  function live() { return window.htmx && document.body && document.body.hasAttribute("sse-connect"); }
  function disconnect() {
    if (!live()) return;
    htmx.trigger(document.body, "htmx:beforeCleanupElement");
    streamUp = false;
  }
  function reconnect() {
    if (!live()) return;
    htmx.trigger(document.body, "htmx:afterProcessNode");
    var listeners = document.querySelectorAll("[hx-trigger*='sse:']");
    for (var i = 0; i < listeners.length; i++) htmx.trigger(listeners[i], "htmx:afterProcessNode");
  }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) { disconnect(); } else { reconnect(); }
  });
  window.addEventListener("pagehide", disconnect);
  window.addEventListener("pageshow", function (e) { if (e.persisted) reconnect(); });

  // The selected gates, by ref: kept across refreshes of the queue.
  var selected = {};

  function lines() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-testid=attention-item]"));
  }

  function lineOf(el) {
    return el && el.closest ? el.closest("[data-testid=attention-item]") : null;
  }

  // updateBulk shows how many gates are selected in the bulk bar.
  // Once one is selected, only gates of its kind (its title) can be: one
  // answer fits only questions alike.
  function updateBulk() {
    var checked = document.querySelectorAll("input[name=refs]:checked");
    var n = checked.length;
    var group = n ? checked[0].getAttribute("data-group") : null;
    var count = document.getElementById("bulk-count");
    if (count) count.textContent = (n === 1 ? "1 gate" : n + " gates") + (group ? ": " + group : "");
    var boxes = document.querySelectorAll("input[name=refs]");
    for (var i = 0; i < boxes.length; i++) {
      boxes[i].disabled = group !== null && boxes[i].getAttribute("data-group") !== group;
    }
    document.body.classList.toggle("selecting", n > 0);
  }

  function remember() {
    selected = {};
    var boxes = document.querySelectorAll("input[name=refs]:checked");
    for (var i = 0; i < boxes.length; i++) selected[boxes[i].value] = true;
  }

  function restore() {
    var boxes = document.querySelectorAll("input[name=refs]");
    for (var i = 0; i < boxes.length; i++) {
      if (selected[boxes[i].value]) boxes[i].checked = true;
    }
    updateBulk();
  }

  // open toggles a line's form: loads it in place, or closes it.
  function open(line) {
    var slot = line.querySelector(".slot");
    var link = line.querySelector("[data-testid=open-item]");
    if (!slot || !link) return;
    if (slot.children.length) {
      slot.innerHTML = "";
      line.classList.remove("open");
      line.focus();
      return;
    }
    link.click();
  }

  document.addEventListener("change", function (e) {
    // A select marked data-autosubmit submits its form when it changes
    // (no inline handler: the CSP allows no inline script).
    if (e.target.matches && e.target.matches("select[data-autosubmit]") && e.target.form) {
      e.target.form.requestSubmit();
      return;
    }
    if (e.target && e.target.name === "refs") { remember(); updateBulk(); }
  });

  // A button marked data-confirm asks once: the first click turns it into
  // its question ("Click again to …") for a few seconds, the second acts.
  document.addEventListener("click", function (e) {
    var b = e.target && e.target.closest ? e.target.closest("button[data-confirm]") : null;
    if (!b || b.getAttribute("data-armed")) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    var label = b.textContent;
    b.setAttribute("data-armed", "1");
    b.textContent = b.getAttribute("data-confirm");
    setTimeout(function () {
      b.removeAttribute("data-armed");
      b.textContent = label;
    }, 6000);
  }, true);

  document.addEventListener("click", function (e) {
    var t = e.target;
    if (t && t.getAttribute && t.getAttribute("data-action") === "dismiss") {
      var gone = lineOf(t);
      if (gone) {
        var all = lines();
        var after = all[all.indexOf(gone) + 1] || all[all.indexOf(gone) - 1];
        gone.parentNode.removeChild(gone);
        if (after) after.focus();
      }
      return;
    }
    if (t && t.getAttribute && t.getAttribute("data-action") === "close-keys") {
      toggleKeys(false);
      return;
    }
    if (t && t.getAttribute && t.getAttribute("data-action") === "select-all") {
      selectAll();
      return;
    }
    if (t && t.getAttribute && t.getAttribute("data-action") === "clear-selection") {
      var boxes = document.querySelectorAll("input[name=refs]:checked");
      for (var i = 0; i < boxes.length; i++) boxes[i].checked = false;
      remember();
      updateBulk();
      return;
    }
    var link = t && t.closest ? t.closest("[data-testid=open-item]") : null;
    if (link && !e.ctrlKey && !e.metaKey && !e.shiftKey) {
      var slot = link.closest("[data-testid=attention-item]").querySelector(".slot");
      if (slot && slot.children.length) {
        // Open already: the title closes it.
        e.preventDefault();
        e.stopPropagation();
        open(lineOf(link));
      }
      return;
    }
    // A click anywhere else on a line's row opens it.
    var row = t && t.closest ? t.closest(".line-row") : null;
    if (row && !t.closest("a, button, input, label, select, textarea")) {
      open(lineOf(row));
    }
  }, true);

  // A form asked for just before a refresh of the queue lands in the
  // refreshed line: its slot has the same id. A refresh of the queue
  // first notes the lines open here, so that one another lead acted on
  // meanwhile stays, with what they did (see keepGone).
  var openBefore = [];
  document.addEventListener("htmx:beforeSwap", function (e) {
    var target = e.detail.target;
    if (target && target.id && !document.body.contains(target)) {
      var live = document.getElementById(target.id);
      if (live) e.detail.target = live;
    }
    if (e.detail.target && e.detail.target.id === "queue") {
      openBefore = lines().filter(function (l) {
        return l.classList.contains("acted") || l.querySelector(".slot").children.length > 0;
      }).map(function (l) { return { line: l, next: l.nextElementSibling, group: l.parentNode }; });
    }
  });

  // keepGone puts back a line that was open here and left the queue with
  // the refresh: its form as typed (disabled from sending twice only by
  // the server's answer), marked with who did what, until dismissed.
  function keepGone() {
    var kept = openBefore;
    openBefore = [];
    var holder = document.getElementById("queue-lines");
    if (!holder) return;
    kept.forEach(function (k) {
      if (document.getElementById(k.line.id)) return;
      k.line.classList.add("acted");
      holder.insertBefore(k.line, holder.firstChild);
      htmx.process(k.line);
      var note = k.line.querySelector(".gone");
      if (note && !note.children.length && k.line.dataset.outcome) {
        htmx.ajax("GET", k.line.dataset.outcome, { target: note, swap: "innerHTML" });
      }
    });
  }

  // After an action removes a line, the focus goes to the line that
  // followed it (or the one before): triage goes on from the keyboard.
  var focusNext = null;
  document.addEventListener("htmx:beforeRequest", function (e) {
    var line = lineOf(e.detail.elt);
    if (!line || e.detail.requestConfig.verb === "get") return;
    var all = lines();
    var i = all.indexOf(line);
    var after = all[i + 1] || all[i - 1];
    focusNext = after ? after.id : null;
  });
  function refocus() {
    if (!focusNext) return;
    var active = document.activeElement;
    if (active && active !== document.body && document.body.contains(active)) return;
    var el = document.getElementById(focusNext);
    if (el) el.focus();
  }

  // A form that opened takes the focus, and its line is marked open.
  document.addEventListener("htmx:afterSwap", function (e) {
    var target = e.detail.target;
    if (target && target.classList && target.classList.contains("slot")) {
      var line = lineOf(target);
      if (line) line.classList.toggle("open", target.children.length > 0);
      var first = target.querySelector("input:not([type=hidden]), select, textarea, button");
      if (first && e.detail.requestConfig && e.detail.requestConfig.verb === "get") first.focus();
    }
    if (target && target.id === "queue") keepGone();
    if (target && (target.id === "queue" || target.id === "queue-more" || target.id === "bulk")) restore();
    refocus();
    // A page's own item gave way to what was done: its next link.
    var next = document.querySelector("[data-testid=item-done] [autofocus]");
    if (next && document.activeElement === document.body) next.focus();
  });

  // A refresh of the queue brings back as many lines as it shows: those
  // loaded page after page stay.
  document.addEventListener("htmx:configRequest", function (e) {
    if (e.detail.elt && e.detail.elt.id === "queue") {
      e.detail.parameters.limit = Math.max(50, lines().length);
    }
  });

  // A bulk resolve that succeeded clears the selection.
  document.addEventListener("htmx:afterRequest", function (e) {
    if (e.detail.elt && e.detail.elt.id === "bulk" && e.detail.successful) {
      selected = {};
      updateBulk();
    }
  });

  // The keys, as the ? overlay lists them.
  var keys = [
    ["j / k", "next / previous item"], ["Enter", "open or close the item"],
    ["a", "accept the agent's proposal (a gate that has one)"], ["r", "go to the resolution field"],
    ["x", "select the item for bulk resolve"], ["b", "go to the bulk bar"], ["Esc", "close the item, or this list"],
    ["g a / g s / g m", "Attention, Sessions, Missions"], ["?", "this list"]];

  // toggleKeys shows or hides the list of keys (a dialog).
  function toggleKeys(show) {
    var box = document.getElementById("keys-help");
    if (!box && show === false) return;
    if (!box) {
      box = document.createElement("div");
      box.id = "keys-help";
      box.className = "keys-help";
      box.setAttribute("role", "dialog");
      box.setAttribute("aria-modal", "true");
      box.setAttribute("aria-labelledby", "keys-help-title");
      box.setAttribute("data-testid", "keys-help");
      var h = document.createElement("h2");
      h.id = "keys-help-title";
      h.textContent = "Keys";
      box.appendChild(h);
      var dl = document.createElement("dl");
      keys.forEach(function (k) {
        var dt = document.createElement("dt");
        var kbd = document.createElement("kbd");
        kbd.textContent = k[0];
        dt.appendChild(kbd);
        var dd = document.createElement("dd");
        dd.textContent = k[1];
        dl.appendChild(dt);
        dl.appendChild(dd);
      });
      box.appendChild(dl);
      var close = document.createElement("button");
      close.type = "button";
      close.className = "secondary small";
      close.textContent = "Close";
      close.setAttribute("data-action", "close-keys");
      box.appendChild(close);
      box.hidden = true;
      document.body.appendChild(box);
    }
    var showing = show === undefined ? box.hidden : show;
    if (showing) {
      box.returnTo = document.activeElement;
      box.hidden = false;
      box.querySelector("button").focus();
    } else {
      box.hidden = true;
      if (box.returnTo && document.body.contains(box.returnTo)) box.returnTo.focus();
    }
  }

  // selectAll selects every gate shown that is of the same kind as those
  // already selected (their gate kind is their title; one answer fits
  // only questions alike), or every gate when none is.
  function selectAll() {
    var boxes = Array.prototype.slice.call(document.querySelectorAll("input[name=refs]"));
    var chosen = boxes.filter(function (b) { return b.checked; });
    var group = chosen.length ? chosen[0].getAttribute("data-group") : null;
    boxes.forEach(function (b) {
      if (group === null || b.getAttribute("data-group") === group) b.checked = true;
    });
    remember();
    updateBulk();
  }

  // lineAction finds, in a line (opening it first when it is closed),
  // the element of selector and hands it to act once it is there.
  // swallowKeypress keeps the key whose keydown moved the focus into a
  // field from being typed there: its keypress, when one follows, is
  // stopped.
  function swallowKeypress(key) {
    var stop = function (e) {
      document.removeEventListener("keypress", stop, true);
      if (e.key === key) e.preventDefault();
    };
    document.addEventListener("keypress", stop, true);
    setTimeout(function () { document.removeEventListener("keypress", stop, true); }, 200);
  }

  function lineAction(line, selector, act) {
    var el = line.querySelector(selector);
    if (el) { act(el); return; }
    var slot = line.querySelector(".slot");
    if (!slot || slot.children.length) return;
    // After the settle: by then htmx has taken the form in, so that a
    // click sends it through htmx rather than as a plain form.
    var once = function (e) {
      if (e.detail.target !== slot) return;
      document.removeEventListener("htmx:afterSettle", once);
      var found = line.querySelector(selector);
      if (found) act(found);
    };
    document.addEventListener("htmx:afterSettle", once);
    open(line);
  }

  // g a: Attention, g s: sessions, g m: missions; the rest as keys lists.
  var pending = "";
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape") {
      var help = document.getElementById("keys-help");
      if (help && !help.hidden) {
        toggleKeys(false);
        e.preventDefault();
        return;
      }
      var openLine = lineOf(t);
      if (openLine && openLine.querySelector(".slot").children.length) {
        open(openLine);
        e.preventDefault();
      }
      return;
    }
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (pending === "g") {
      pending = "";
      var to = { a: "/", s: "/sessions", m: "/missions" }[e.key];
      if (to) { window.location.href = to; }
      return;
    }
    if (e.key === "g") { pending = "g"; return; }
    if (e.key === "?") {
      toggleKeys();
      e.preventDefault();
      return;
    }
    if (e.key === "b") {
      var bulk = document.querySelector("#bulk input[name=resolution]");
      if (bulk && document.body.classList.contains("selecting")) {
        bulk.focus();
        e.preventDefault();
      }
      return;
    }
    var line = lineOf(t);
    if (e.key === "j" || e.key === "k") {
      var all = lines();
      if (!all.length) return;
      var i = all.indexOf(line);
      i = e.key === "j" ? Math.min(all.length - 1, i + 1) : Math.max(0, i - 1);
      all[i].focus();
      e.preventDefault();
      return;
    }
    if (!line || (t !== line && !t.classList.contains("line-title"))) return;
    if (e.key === "a") {
      lineAction(line, "[data-testid=accept-proposal]", function (el) { el.focus(); el.click(); });
      e.preventDefault();
    } else if (e.key === "r") {
      swallowKeypress("r");
      lineAction(line, "[data-testid=resolve-form] input[name=resolution]", function (el) { el.focus(); });
      e.preventDefault();
    } else if (e.key === "Enter") {
      open(line);
      e.preventDefault();
    } else if (e.key === "x") {
      var box = line.querySelector("input[name=refs]");
      if (box && !box.disabled) {
        box.checked = !box.checked;
        remember();
        updateBulk();
      }
      e.preventDefault();
    }
  });

  document.addEventListener("DOMContentLoaded", updateBulk);
})();

// A failed htmx request says what went wrong instead of doing nothing.
document.addEventListener("htmx:responseError", function (e) {
  var box = document.getElementById("flash");
  if (!box) {
    box = document.createElement("p");
    box.id = "flash";
    box.className = "error";
    box.setAttribute("role", "alert");
    var main = document.querySelector("main");
    if (main) main.insertBefore(box, main.firstChild);
  }
  box.textContent = e.detail.xhr.responseText || "Something went wrong. Reload the page and try again.";
});
