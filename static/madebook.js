// Madebook's own script: the Attention inbox's keys (j/k move, Enter
// opens, x selects, Esc closes), the bulk bar's selection, the push
// stream's state (the poll runs only while it is down), and messages for
// failed requests. Everything works without it, more slowly.
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
  function updateBulk() {
    var n = document.querySelectorAll("input[name=refs]:checked").length;
    var count = document.getElementById("bulk-count");
    if (count) count.textContent = n === 1 ? "1 gate" : n + " gates";
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

  document.addEventListener("click", function (e) {
    var t = e.target;
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
  // refreshed line: its slot has the same id.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var target = e.detail.target;
    if (target && target.id && !document.body.contains(target)) {
      var live = document.getElementById(target.id);
      if (live) e.detail.target = live;
    }
  });

  // A form that opened takes the focus, and its line is marked open.
  document.addEventListener("htmx:afterSwap", function (e) {
    var target = e.detail.target;
    if (target && target.classList && target.classList.contains("slot")) {
      var line = lineOf(target);
      if (line) line.classList.toggle("open", target.children.length > 0);
      var first = target.querySelector("input:not([type=hidden]), select, textarea, button");
      if (first && e.detail.requestConfig && e.detail.requestConfig.verb === "get") first.focus();
    }
    if (target && (target.id === "queue" || target.id === "queue-more" || target.id === "bulk")) restore();
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

  // g a: Attention, g s: sessions, g m: missions; j/k move between lines,
  // Enter opens, x selects a gate, Esc closes the open form.
  var pending = "";
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape") {
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
    if (e.key === "Enter") {
      open(line);
      e.preventDefault();
    } else if (e.key === "x") {
      var box = line.querySelector("input[name=refs]");
      if (box) {
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
