// focus.js: one rule, for the storefront and the console alike, for where
// keyboard focus goes when an htmx swap replaces the element that had it.
// Without it the browser drops focus to <body>, and a keyboard or
// screen-reader user starts again from the top of the page.
//
// When a swap removed the focused element, focus moves to the first of:
//   1. what the answer names: an element of the swapped-in content marked
//      data-focus (the field to fix, the first of the new cards);
//   2. the same control again: the element with its id, or with its
//      data-testid (else name) inside the element with the id of its
//      nearest ancestor that had one, when it was the only such control
//      there (the Update button of the same cart line, the Save button of
//      the same row; not the first Cancel of a list);
//   3. the target the control named for when it is gone: a selector in
//      data-focus-after on it or an ancestor (after Remove, the cart's
//      summary; after Cancel, the checkout's heading);
//   4. the nearest ancestor with an id that is still there, else the
//      element that replaced the swap's target.
// An element that is not a control is made focusable by script only
// (tabindex="-1"). The text of any data-announce element of the new
// content is then said in the page's polite live region (#swap-status),
// so the outcome is heard even where focus lands on something else.
// Focus the user has moved elsewhere meanwhile, or that htmx kept itself
// (it refocuses an element by id, and honours autofocus), stays put.
//
// window.petstoreFocus(root) applies rule 1 to content a script swapped
// in without htmx (the console's photo upload).
(function () {
  "use strict";

  var controls = "a[href], button, input, select, textarea, summary, [tabindex]";

  function byId(id) {
    return id ? document.getElementById(id) : null;
  }

  function cssString(s) {
    return '"' + String(s).replace(/["\\]/g, "\\$&") + '"';
  }

  // key finds the control again in fresh content: its data-testid, else
  // its tag and name.
  function key(el) {
    if (el.dataset && el.dataset.testid) return "[data-testid=" + cssString(el.dataset.testid) + "]";
    if (el.name) return el.tagName.toLowerCase() + "[name=" + cssString(el.name) + "]";
    return "";
  }

  function named(roots) {
    for (var i = 0; i < roots.length; i++) {
      var r = roots[i];
      if (!r || !r.querySelector || !document.contains(r)) continue;
      var el = r.matches("[data-focus]") ? r : r.querySelector("[data-focus]");
      if (el) return el;
    }
    return null;
  }

  function focusOn(el) {
    if (!el) return false;
    el.removeAttribute("data-focus");
    if (!el.matches(controls)) el.setAttribute("tabindex", "-1");
    el.focus();
    return document.activeElement === el;
  }

  function announce(roots) {
    var region = byId("swap-status");
    if (!region) return;
    var words = [];
    roots.forEach(function (r) {
      if (!r || !r.querySelectorAll || !document.contains(r)) return;
      var found = r.matches("[data-announce]") ? [r] : Array.prototype.slice.call(r.querySelectorAll("[data-announce]"));
      found.forEach(function (el) {
        var t = el.textContent.replace(/\s+/g, " ").trim();
        if (t) words.push(t);
      });
    });
    region.textContent = words.join(" ");
  }

  window.petstoreFocus = function (root) {
    return focusOn(named([root]));
  };

  if (!window.htmx) return; // without htmx every form is a full page

  // The swaps under way that took focus with them, by request: a poll
  // may swap elsewhere meanwhile.
  var pending = new WeakMap();
  document.addEventListener("htmx:beforeSwap", function (e) {
    var d = e.detail;
    var active = document.activeElement;
    if (!d.shouldSwap || !d.target || !active || active === document.body || !d.target.contains(active)) return;
    var anchor = active.parentElement && active.parentElement.closest("[id]");
    var k = key(active);
    var trigger = d.requestConfig && d.requestConfig.elt;
    var after = (trigger && trigger.closest && trigger.closest("[data-focus-after]")) || active.closest("[data-focus-after]");
    pending.set(d.xhr, {
      id: active.id,
      key: k && anchor && anchor.querySelectorAll(k).length === 1 ? k : "",
      anchors: (function () {
        var ids = [];
        for (var a = anchor; a; a = a.parentElement && a.parentElement.closest("[id]")) ids.push(a.id);
        return ids;
      })(),
      after: after ? after.getAttribute("data-focus-after") : "",
      targetId: d.target.id,
      swapped: [],
    });
  });

  document.addEventListener("htmx:afterSwap", function (e) {
    var p = e.detail.xhr && pending.get(e.detail.xhr);
    if (p) p.swapped.push(e.target);
  });

  document.addEventListener("htmx:afterSettle", function (e) {
    var p = e.detail.xhr && pending.get(e.detail.xhr);
    if (!p) return;
    pending.delete(e.detail.xhr);
    var active = document.activeElement;
    if (active && active !== document.body && document.contains(active)) return;
    var anchor = byId(p.anchors[0]);
    var same = byId(p.id) || (anchor && p.key ? anchor.querySelector(p.key) : null);
    var after = null;
    try {
      after = p.after ? document.querySelector(p.after) : null;
    } catch (err) {
      after = null; // a selector that is not one names nothing
    }
    var still = null;
    for (var i = 0; i < p.anchors.length && !still; i++) still = byId(p.anchors[i]);
    var done = focusOn(named(p.swapped)) || focusOn(same) || focusOn(after) || focusOn(still) || focusOn(byId(p.targetId));
    if (done) announce(p.swapped);
  });
})();
