/* The demo merchant page's script (and the browser tests' parent page): mount the checkout with
 * embed.js and list the events it sends. Served as a file: the page allows no inline script.
 *
 * It also plays the shop's own wallet: on "deposit-requested" it shows what the checkout asks to be
 * sent and a button that "sends" it (the sandbox moves no real money, so the hash is made up) and
 * hands the hash back with handle.depositSent. With data-auto-deposit="1" on the mount point it
 * answers by itself (the browser tests set it); the attribute is read when the request arrives.
 */
(function () {
  "use strict";

  var mountPoint = document.getElementById("checkout");
  var list = document.getElementById("checkout-events");
  var events = [];
  // Tests read the events here; the list below is for people.
  window.checkoutEvents = events;

  function show(event) {
    if (!list || event.type === "resize") return null;
    var item = document.createElement("li");
    var text = event.type;
    if (event.order && event.order.id) text += " - order " + event.order.id;
    if (event.order && event.order.status) text += " (" + event.order.status + ")";
    item.textContent = text;
    list.appendChild(item);
    return item;
  }

  // A made-up transaction hash in the shape EVM chains use: 0x and 32 random bytes in hex.
  function fakeTransactionHash() {
    var bytes = new Uint8Array(32);
    window.crypto.getRandomValues(bytes);
    var hex = "0x";
    for (var i = 0; i < bytes.length; i++) {
      hex += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
    }
    return hex;
  }

  function describeDeposit(deposit) {
    var parts = [deposit.amount, deposit.asset, "on", deposit.network, "to", deposit.address];
    if (deposit.chainId) parts.push("(chain " + deposit.chainId + ")");
    if (deposit.tokenContract) parts.push("(token " + deposit.tokenContract + ")");
    return "Asked to send " + parts.join(" ");
  }

  function offerDeposit(handle, event, item) {
    var deposit = event.deposit;
    if (!deposit || typeof deposit !== "object") return;
    var button = document.createElement("button");
    var result = document.createElement("p");

    function send() {
      var hash = fakeTransactionHash();
      try {
        handle.depositSent(hash);
      } catch (err) {
        result.textContent = "Could not hand the hash to the checkout: " + err.message;
        return;
      }
      button.disabled = true;
      result.textContent = "Sent. Transaction " + hash;
    }

    if (item) {
      var details = document.createElement("p");
      details.className = "shop-deposit";
      details.textContent = describeDeposit(deposit);
      button.type = "button";
      button.className = "shop-button";
      button.textContent = "Send from the shop's wallet (demo)";
      button.addEventListener("click", send);
      result.className = "shop-deposit-result";
      // Tells screen reader users what the click did.
      result.setAttribute("role", "status");
      item.appendChild(details);
      item.appendChild(button);
      item.appendChild(result);
    }
    if (mountPoint.getAttribute("data-auto-deposit") === "1") send();
  }

  if (!mountPoint || !window.Checkout) return;
  var handle = window.Checkout.mount(mountPoint, {
    url: mountPoint.getAttribute("data-checkout-url"),
    title: mountPoint.getAttribute("data-checkout-title") || "Checkout",
    onEvent: function (event) {
      events.push(event);
      var item = show(event);
      if (event.type === "deposit-requested") offerDeposit(handle, event, item);
    }
  });
  // For the browser tests (and for trying things from the console).
  window.checkoutHandle = handle;
})();
