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

  document.addEventListener("htmx:sendError", function () {
    say("The shop could not be reached. Check your connection and try again.");
  });
})();
