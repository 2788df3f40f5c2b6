// button-links.js: Space presses a link styled as a button (role="button")
// as it presses a real <button>; browsers do that for Enter only. As for a
// button, the press happens on keyup, on the element that got the keydown,
// and keydown's default (scrolling the page) is cancelled. <summary
// role="button"> is not a link and is left alone: Space toggles it
// natively, and a second press would toggle it back. The storefront and
// the console both load it; it needs nothing else.
(function () {
  "use strict";

  var spacePressed = null;
  function isButtonLink(el) {
    return el instanceof HTMLAnchorElement && el.hasAttribute("href") && el.getAttribute("role") === "button";
  }
  function isSpace(e) {
    return e.key === " " && !e.altKey && !e.ctrlKey && !e.metaKey && !e.isComposing;
  }
  document.addEventListener("keydown", function (e) {
    if (isSpace(e) && isButtonLink(e.target)) {
      e.preventDefault();
      if (!e.repeat) {
        spacePressed = e.target;
      }
    }
  });
  document.addEventListener("keyup", function (e) {
    if (!isSpace(e) || !spacePressed) {
      return;
    }
    var pressed = spacePressed;
    spacePressed = null;
    if (pressed === e.target) {
      e.preventDefault();
      pressed.click();
    }
  });
})();
