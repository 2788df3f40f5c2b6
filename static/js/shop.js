// shop.js configures htmx for the storefront. It is a file of its own, not
// an inline <script>, because the Content-Security-Policy allows scripts
// from 'self' only. Everything works without it: forms and links fall back
// to full pages.
(function () {
  "use strict";

  // The pet page's gallery: a thumbnail shows its photo large in place. Its
  // link works without JavaScript too (?photo=N, rendered by the server);
  // here the address follows along, the chosen link is marked
  // (aria-current) and the caption, a live region, says which photo shows.
  document.addEventListener("click", function (e) {
    var link = e.target.closest && e.target.closest(".gallery-thumbs a[data-large]");
    if (!link || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) {
      return;
    }
    var gallery = link.closest(".pet-gallery");
    var main = gallery && gallery.querySelector(".gallery-main img");
    if (!main) {
      return;
    }
    e.preventDefault();
    main.srcset = link.dataset.srcset;
    main.src = link.dataset.large;
    main.width = Number(link.dataset.width);
    main.height = Number(link.dataset.height);
    main.alt = link.dataset.alt;
    var caption = gallery.querySelector(".gallery-main figcaption");
    if (caption) {
      caption.textContent = link.dataset.caption;
    }
    gallery.querySelectorAll(".gallery-thumbs a[aria-current]").forEach(function (a) {
      a.removeAttribute("aria-current");
    });
    link.setAttribute("aria-current", "true");
    if (window.history && window.history.replaceState) {
      window.history.replaceState(window.history.state, "", link.href);
    }
  });

  if (!window.htmx) {
    return; // htmx failed to load; the plain forms and links still work
  }

  // htmx 2 swaps only 2xx answers by default. The shop answers a form it
  // refuses with 422 and the form again, showing what to fix; other 4xx
  // answers carry a message and HX-Retarget: #flash. Server errors are not
  // swapped: the message below says what happened instead.
  window.htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "4..", swap: true },
    { code: "...", swap: false, error: true },
  ];

  function say(text) {
    var region = document.getElementById("flash");
    if (!region) {
      return;
    }
    var p = document.createElement("p");
    p.className = "flash flash-error";
    p.setAttribute("role", "alert");
    p.textContent = text;
    region.replaceChildren(p);
  }

  // errorText is the message of an error fragment (views.ErrorFragment).
  function errorText(xhr) {
    try {
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var p = doc.querySelector("[data-testid=error] p");
      return p ? p.textContent.trim() : "";
    } catch (e) {
      return "";
    }
  }

  document.addEventListener("htmx:responseError", function (evt) {
    var status = evt.detail && evt.detail.xhr ? evt.detail.xhr.status : 0;
    if (status === 503) {
      // The database is unavailable: the answer's own words say so.
      say(errorText(evt.detail.xhr) || "The shop is unavailable just now. Please try again in a few seconds.");
    } else if (status >= 500) {
      say("Something went wrong on our side (" + status + "). Please try again in a moment.");
    }
  });

  // Focus after swaps. "Load more" and the order form replace the control
  // the user pressed, so the browser drops focus to <body> and a keyboard
  // or screen-reader user has to start again from the top of the page.
  // Focus moves to what the swap brought: the first new card's name; the
  // field to fix, or else the line saying what the cart holds now (the
  // #flash live region announces the message itself). Focus the user has
  // moved elsewhere meanwhile stays where it is.
  var focusAfter = null; // {xhr, region, find} for the swap under way
  document.addEventListener("htmx:beforeSwap", function (evt) {
    var d = evt.detail;
    var target = d.target;
    if (!d.shouldSwap || !target) {
      return;
    }
    if (target.id === "load-more") {
      var last = target.previousElementSibling;
      var list = target.parentElement;
      focusAfter = {
        xhr: d.xhr,
        region: function () {
          return list;
        },
        find: function () {
          var first = last ? last.nextElementSibling : list.firstElementChild;
          return first && first.id !== "load-more" ? first.querySelector("h3 a") : null;
        },
      };
    } else if (target.id === "order-form") {
      focusAfter = {
        xhr: d.xhr,
        region: function () {
          return document.getElementById("order-form");
        },
        find: function () {
          var form = document.getElementById("order-form");
          return form && (form.querySelector("[aria-invalid=true]") || form.querySelector(".in-cart"));
        },
      };
    }
  });

  document.addEventListener("htmx:afterSettle", function (evt) {
    var plan = focusAfter;
    if (!plan || plan.xhr !== evt.detail.xhr) {
      return;
    }
    focusAfter = null;
    var active = document.activeElement;
    var region = plan.region();
    if (active && active !== document.body && !(region && region.contains(active))) {
      return;
    }
    var el = plan.find();
    if (!el) {
      return;
    }
    if (!el.matches("a[href], button, input, select, textarea, [tabindex]")) {
      el.setAttribute("tabindex", "-1"); // focusable by script, not by Tab
    }
    el.focus();
  });

  document.addEventListener("htmx:sendError", function () {
    say("The shop could not be reached. Check your connection and try again.");
  });
})();
