/* The demo merchant page's script (and the browser tests' parent page): mount the checkout with
 * embed.js and list the events it sends. Served as a file: the page allows no inline script. */
(function () {
  "use strict";

  var mountPoint = document.getElementById("checkout");
  var list = document.getElementById("checkout-events");
  var events = [];
  // Tests read the events here; the list below is for people.
  window.checkoutEvents = events;

  function show(event) {
    if (!list || event.type === "resize") return;
    var item = document.createElement("li");
    var text = event.type;
    if (event.order && event.order.id) text += " - order " + event.order.id;
    if (event.order && event.order.status) text += " (" + event.order.status + ")";
    item.textContent = text;
    list.appendChild(item);
  }

  if (!mountPoint || !window.Checkout) return;
  window.Checkout.mount(mountPoint, {
    url: mountPoint.getAttribute("data-checkout-url"),
    title: mountPoint.getAttribute("data-checkout-title") || "Checkout",
    onEvent: function (event) {
      events.push(event);
      show(event);
    }
  });
})();
