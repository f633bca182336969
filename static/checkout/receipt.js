/* The receipt's "Print or save" button: the browser's own print, which phones keep in a menu.
 * Without script the button stays hidden and the page prints from the browser's menu alike. */
(function () {
  "use strict";
  var button = document.querySelector("[data-print]");
  if (!button || typeof window.print !== "function") return;
  button.hidden = false;
  button.addEventListener("click", function () { window.print(); });
})();
