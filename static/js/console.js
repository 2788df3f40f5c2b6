// console.js: the staff console's behaviour on top of htmx (no inline
// scripts: the CSP allows only same-origin files).
//
// - htmx configuration: 422 and 409 answers swap (forms and rows re-render
//   with their message); no eval; no inline indicator styles.
// - Other htmx errors show in the page's alert region.
// - Live updates (htmx-ext-sse): a refresh that would overwrite a row the
//   user is editing waits until they leave it; an inventory row refreshes
//   only when the event is about its pet and changes what it shows.
// - The live indicator, the copy button, filters that apply on change, and
//   a highlight for new orders; a webhook's "All events" clears the other
//   events it includes.
// - A table wider than its column (between the phone's cards and a wide
//   screen) says so above it, and its frame takes focus, so the keyboard
//   scrolls it too.
// - A pet's photos: the upload's progress; focus after the section is
//   replaced follows focus.js's rule (window.petstoreFocus), as for htmx.
(function () {
  "use strict";

  htmx.config.allowEval = false;
  htmx.config.includeIndicatorStyles = false;
  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "422", swap: true, error: false },
    { code: "409", swap: true, error: false },
    { code: "[45]..", swap: false, error: true },
    { code: "...", swap: false },
  ];

  var alertBox = function () {
    return document.getElementById("console-alert");
  };

  function showAlert(text) {
    var box = alertBox();
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
  }

  // The text of an error answer: the error fragment's message, if any.
  function errorText(xhr) {
    var text = "";
    try {
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var p = doc.querySelector("[data-testid=error] p, .field-error");
      if (p) text = p.textContent.trim();
    } catch (e) {}
    if (!text) {
      text = xhr.status === 0 ? "The server could not be reached." : "The request failed (" + xhr.status + ").";
    }
    return text;
  }

  document.addEventListener("htmx:responseError", function (e) {
    showAlert(errorText(e.detail.xhr));
  });
  document.addEventListener("htmx:sendError", function () {
    showAlert("The server could not be reached. Check your connection and try again.");
  });
  document.addEventListener("htmx:beforeRequest", function (e) {
    var trig = e.detail.requestConfig && e.detail.requestConfig.triggeringEvent;
    // Polls and live refreshes leave an error the user has not read.
    if (trig && (trig.type === "submit" || trig.type === "click")) {
      var box = alertBox();
      if (box) box.hidden = true;
    }
  });

  // An element is busy while the user edits inside it: a field has focus
  // or holds a value they have not saved yet.
  function busy(elt) {
    var active = document.activeElement;
    if (active && elt.contains(active) && active.matches("input, select, textarea")) return true;
    var fields = elt.querySelectorAll("input:not([type=hidden]), textarea");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].value !== fields[i].defaultValue) return true;
    }
    return false;
  }

  function eventData(trig) {
    try {
      return JSON.parse(trig.detail.data);
    } catch (e) {
      return null;
    }
  }

  // htmx:confirm runs before every request: skip live refreshes that are
  // not needed or would overwrite the user's typing.
  document.addEventListener("htmx:confirm", function (e) {
    var elt = e.detail.elt;
    var trig = e.detail.triggeringEvent;
    if (!elt.dataset.live || !trig || typeof trig.type !== "string" || trig.type.indexOf("sse:") !== 0) return;
    if (elt.dataset.live === "row" && trig.type === "sse:inventory.updated") {
      var item = eventData(trig);
      if (!item || String(item.petId) !== elt.dataset.petId) {
        e.preventDefault();
        return;
      }
      if (String(item.quantity) === elt.dataset.quantity && item.status === elt.dataset.status) {
        e.preventDefault();
        return;
      }
    }
    if (busy(elt)) {
      e.preventDefault();
      elt.dataset.stale = "1";
    }
  });

  // Leaving a stale row (or table) refreshes it.
  document.addEventListener("focusout", function (e) {
    window.setTimeout(function () {
      var stale = e.target.closest && e.target.closest("[data-stale]");
      if (stale && document.body.contains(stale) && !busy(stale)) {
        delete stale.dataset.stale;
        htmx.trigger(stale, "refresh");
      }
    }, 0);
  });

  // The live indicator follows the event stream.
  function setLive(state, text) {
    var el = document.querySelector("[data-testid=live-status]");
    if (!el) return;
    el.dataset.state = state;
    el.textContent = text;
  }
  document.addEventListener("htmx:sseOpen", function () {
    setLive("open", "Live");
  });
  document.addEventListener("htmx:sseError", function () {
    setLive("error", "Reconnecting…");
  });

  // New orders that arrive live are highlighted for a moment.
  var seenOrders = null;
  function orderIDs() {
    var ids = {};
    document.querySelectorAll("#order-rows tr[data-order-id]").forEach(function (tr) {
      ids[tr.dataset.orderId] = true;
    });
    return ids;
  }
  document.addEventListener("DOMContentLoaded", function () {
    seenOrders = orderIDs();
  });
  document.addEventListener("htmx:afterSettle", function (e) {
    if (!seenOrders || !e.target || e.target.id !== "order-rows") return;
    document.querySelectorAll("#order-rows tr[data-order-id]").forEach(function (tr) {
      if (!seenOrders[tr.dataset.orderId]) tr.classList.add("arrived");
    });
    seenOrders = orderIDs();
  });

  // Filter forms apply a choice at once; their Filter button stays for
  // browsers without JavaScript.
  document.addEventListener("change", function (e) {
    var field = e.target;
    if (field.matches && field.matches("form.filters select") && field.form.requestSubmit) {
      field.form.requestSubmit();
    }
  });

  // A pet's photos (views/console/photos.templ). The upload form is a
  // plain multipart form; here it is sent with XMLHttpRequest instead, to
  // show the upload's progress, and the server's answer (the photos
  // section, as for htmx) replaces the section. The token goes in the
  // X-CSRF-Token header, so the server checks it before reading the body.
  function replacePhotos(html) {
    var old = document.getElementById("photos");
    var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("photos");
    if (!old || !fresh) return null;
    fresh = document.importNode(fresh, true);
    old.replaceWith(fresh);
    if (window.htmx) htmx.process(fresh);
    // The section names the control that had focus (data-focus), since
    // the one pressed was replaced with the section.
    if (window.petstoreFocus) window.petstoreFocus(fresh);
    return fresh;
  }

  function plural(n, one) {
    return n + " " + one + (n === 1 ? "" : "s");
  }

  function showProgress(form, value, max, text) {
    var box = form.querySelector(".upload-progress");
    if (!box) return;
    var bar = box.querySelector("progress");
    box.hidden = false;
    bar.max = max;
    bar.value = value;
    box.querySelector("[data-testid=upload-progress-label]").textContent = text;
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-photo-upload") || !window.FormData) return;
    var input = form.querySelector("input[type=file]");
    if (!input || !input.files || input.files.length === 0) return;
    e.preventDefault();
    var count = input.files.length;
    var button = form.querySelector("button[type=submit]");
    var data = new FormData(form);
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("HX-Request", "true");
    xhr.setRequestHeader("X-CSRF-Token", form.elements._csrf.value);
    showProgress(form, 0, 100, "Sending " + plural(count, "photo") + "…");
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    xhr.upload.addEventListener("progress", function (ev) {
      if (!ev.lengthComputable || ev.total === 0) return;
      showProgress(form, ev.loaded, ev.total, "Sent " + Math.floor((ev.loaded * 100) / ev.total) + "%");
    });
    xhr.upload.addEventListener("load", function () {
      showProgress(form, 100, 100, "Sent; processing…");
    });
    function failed(text) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      showProgress(form, 0, 100, "Upload failed");
      showAlert(text);
    }
    xhr.addEventListener("load", function () {
      var redirect = xhr.getResponseHeader("HX-Redirect");
      if (redirect) {
        window.location.href = redirect;
        return;
      }
      if (xhr.status === 200 || xhr.status === 409) {
        var fresh = replacePhotos(xhr.responseText);
        var next = fresh && fresh.querySelector("form[data-photo-upload]");
        if (next) showProgress(next, 100, 100, "Upload complete: " + plural(count, "file") + " sent");
        if (fresh) return;
      }
      failed(errorText(xhr));
    });
    xhr.addEventListener("error", function () {
      failed("The server could not be reached. Check your connection and try again.");
    });
    var box = alertBox();
    if (box) box.hidden = true;
    xhr.send(data);
  });

  // Tables wider than their column scroll inside their .table-wrap (on
  // narrow screens they are cards instead, tables.css). Such a frame gets
  // a line above it that says so, and becomes a named region in the tab
  // order, where the arrow keys scroll it.
  function cueWideTables() {
    document.querySelectorAll(".table-wrap").forEach(function (wrap) {
      var wide = wrap.scrollWidth > wrap.clientWidth + 1;
      var cue = wrap.previousElementSibling;
      if (!cue || !cue.classList.contains("scroll-cue")) {
        if (!wide) return;
        cue = document.createElement("p");
        cue.className = "scroll-cue";
        cue.textContent = "This table is wider than the page: scroll it sideways to see every column.";
        wrap.parentNode.insertBefore(cue, wrap);
      }
      cue.hidden = !wide;
      if (wide) {
        var section = wrap.closest("section");
        var heading = (section && section.querySelector("h2")) || document.querySelector("main h1");
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        wrap.setAttribute("aria-label", (heading ? heading.textContent.trim() + ": " : "") + "table, scrolls sideways");
      } else {
        wrap.removeAttribute("tabindex");
        wrap.removeAttribute("role");
        wrap.removeAttribute("aria-label");
      }
    });
  }
  var cueTimer = 0;
  function cueSoon() {
    window.clearTimeout(cueTimer);
    cueTimer = window.setTimeout(cueWideTables, 100);
  }
  document.addEventListener("DOMContentLoaded", cueWideTables);
  window.addEventListener("resize", cueSoon);
  document.addEventListener("htmx:afterSettle", cueSoon);

  // A webhook's events: "All events" (the fieldset's data-all-events
  // value) already includes every event, so ticking it clears the others
  // and ticking another clears it. Without this script the server refuses
  // the two together, in the form's error summary.
  document.addEventListener("change", function (e) {
    var box = e.target;
    var set = box.closest && box.closest("fieldset[data-all-events]");
    if (!set || box.type !== "checkbox" || !box.checked) return;
    var all = box.value === set.dataset.allEvents;
    set.querySelectorAll("input[type=checkbox]").forEach(function (other) {
      if (other !== box && (all || other.value === set.dataset.allEvents)) other.checked = false;
    });
  });

  // Copy buttons: data-copy names the input whose value they copy.
  document.addEventListener("click", function (e) {
    var btn = e.target.closest && e.target.closest("[data-copy]");
    if (!btn) return;
    var input = document.getElementById(btn.dataset.copy);
    if (!input) return;
    var done = function () {
      btn.textContent = "Copied";
      btn.classList.add("copied");
      window.setTimeout(function () {
        btn.textContent = "Copy";
        btn.classList.remove("copied");
      }, 2000);
    };
    input.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(done, function () {
        if (document.execCommand("copy")) done();
      });
    } else if (document.execCommand("copy")) {
      done();
    }
  });
})();

// The narrow screen's menu button: the sidebar (a top bar there) folds
// its navigation and sign-out behind it. Escape closes it and gives focus
// back to the button. Without this script the button stays hidden and
// everything stays open.
(function () {
  "use strict";
  var side = document.querySelector(".side");
  var button = side && side.querySelector(".menu-toggle");
  if (!button) return;
  button.hidden = false;
  side.classList.add("folding");
  function set(open) {
    side.classList.toggle("open", open);
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }
  button.addEventListener("click", function () {
    set(!side.classList.contains("open"));
  });
  side.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && side.classList.contains("open")) {
      set(false);
      button.focus();
    }
  });
})();
