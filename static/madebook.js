// Madebook's own script: keyboard shortcuts, and keeping the queue's
// polling from replacing a form a person is filling in.
(function () {
  "use strict";

  // busy reports whether a person is in the middle of something in the
  // queue: a field focused or filled in, or an item selected.
  window.madebookQueueBusy = function () {
    var q = document.getElementById("queue");
    if (!q) return false;
    if (q.contains(document.activeElement) && document.activeElement !== q) return true;
    var fields = q.querySelectorAll("textarea, input[type=text]");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].value.trim() !== "") return true;
    }
    return q.querySelector("input[type=checkbox]:checked") !== null;
  };

  // g a: Attention, g s: sessions, g m: missions; j/k move between items.
  var pending = "";
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (pending === "g") {
      pending = "";
      var to = { a: "/", s: "/sessions", m: "/missions" }[e.key];
      if (to) { window.location.href = to; }
      return;
    }
    if (e.key === "g") { pending = "g"; return; }
    if (e.key === "j" || e.key === "k") {
      var items = Array.prototype.slice.call(document.querySelectorAll("[data-testid=attention-item]"));
      if (!items.length) return;
      var i = items.indexOf(document.activeElement && document.activeElement.closest("[data-testid=attention-item]"));
      i = e.key === "j" ? Math.min(items.length - 1, i + 1) : Math.max(0, i - 1);
      items[i].focus();
      e.preventDefault();
    }
  });
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
