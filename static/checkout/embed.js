/* embed.js: mount the hosted checkout in a merchant's page. No dependencies.
 *
 *   <div id="checkout"></div>
 *   <script src="https://pay.example.com/checkout/static/embed.js"></script>
 *   <script src="/your-shop.js"></script>   // calls:
 *
 *   var handle = Checkout.mount(document.getElementById("checkout"), {
 *     url: launchUrl,                 // from checkout.launch_url(..., parentOrigin=<this page's origin>)
 *     onEvent: function (event) {     // {source, version, type, sessionId, order?, height?}
 *       if (event.type === "completed") { ... }
 *     },
 *     title: "Buy USDC",              // optional: the iframe's accessible name
 *     minHeight: 480                  // optional: pixels before the first "resize" event
 *   });
 *   handle.iframe; handle.destroy();
 *   handle.depositSent(txHash);       // off-ramp: the shop sent the crypto from its own wallet
 *
 * Only messages whose origin is the checkout's own origin (taken from `url`), whose source is this
 * very iframe, and whose data says {source: "checkout"} reach onEvent. "resize" events also set the
 * iframe's height, so the checkout never scrolls inside the merchant's page.
 *
 * Every page the frame loads posts "ready". From the second one on (a new step), the merchant's
 * page is scrolled so the iframe's top is in view when it was above the viewport: otherwise, after
 * a click low on a long step, the next step would open far below its own heading.
 *
 * "deposit-requested" ({deposit: {address, amount, asset, network, chainId?, tokenContract?}})
 * asks for a crypto transfer; a shop that makes it from its own wallet hands the transaction hash
 * back with handle.depositSent(txHash), which posts {source: "checkout-parent", version: 1,
 * type: "deposit-sent", txHash} to the frame, to the checkout's exact origin only.
 */
(function (global) {
  "use strict";

  // What the checkout's pages need from the frame: copy buttons (clipboard-write), the Payment
  // Request API for wallets that use it (payment), and the camera for KYC photos (camera). No
  // sandbox attribute: redirect payments leave the
  // frame by a user's click on a target="_top" link, which a sandbox would forbid.
  var ALLOW = "clipboard-write; payment; camera";
  var EVENT_TYPES = {
    "ready": 1, "resize": 1, "order-created": 1, "status-changed": 1,
    "completed": 1, "failed": 1, "closed": 1, "deposit-requested": 1, "step-viewed": 1
  };
  // A transaction hash as any chain writes it (hex, base58, base64...): printable ASCII without
  // spaces, and short enough that nothing downstream has to think about its length.
  var TX_HASH = /^[\x21-\x7e]{1,200}$/;

  function prefersReducedMotion() {
    return !!(global.matchMedia && global.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  function resolveElement(target) {
    var element = typeof target === "string" ? document.querySelector(target) : target;
    if (!element || element.nodeType !== 1) {
      throw new Error("Checkout.mount: no element to mount into");
    }
    return element;
  }

  function mount(target, options) {
    options = options || {};
    if (!options.url) throw new Error("Checkout.mount: options.url is required");
    var element = resolveElement(target);
    var src = new URL(options.url, global.location.href);
    if (src.protocol !== "https:" && src.protocol !== "http:") {
      throw new Error("Checkout.mount: options.url must be http(s)");
    }
    var checkoutOrigin = src.origin;
    var onEvent = typeof options.onEvent === "function" ? options.onEvent : function () {};

    var iframe = document.createElement("iframe");
    iframe.src = src.href;
    iframe.title = options.title || "Checkout";
    iframe.setAttribute("allow", ALLOW);
    iframe.setAttribute("referrerpolicy", "origin");
    iframe.setAttribute("loading", "eager");
    iframe.className = "checkout-frame";
    iframe.style.width = "100%";
    iframe.style.border = "0";
    iframe.style.display = "block";
    iframe.style.height = (options.minHeight || 480) + "px";

    var readyCount = 0;

    // A new page in the frame (a step change) starts at its top: if the merchant's page is
    // scrolled past the iframe's top, bring it back, or the user lands in the middle of the step.
    function revealNewPage() {
      if (iframe.getBoundingClientRect().top >= 0) return;
      try {
        iframe.scrollIntoView({
          block: "start", behavior: prefersReducedMotion() ? "auto" : "smooth"
        });
      } catch (err) {
        iframe.scrollIntoView(true); // browsers without the options argument
      }
    }

    function onMessage(event) {
      if (event.origin !== checkoutOrigin) return;
      if (event.source !== iframe.contentWindow) return;
      var data = event.data;
      if (!data || typeof data !== "object" || data.source !== "checkout") return;
      if (data.version !== 1 || !EVENT_TYPES[data.type]) return;
      if (data.type === "resize" && typeof data.height === "number" && data.height > 0) {
        iframe.style.height = Math.ceil(data.height) + "px";
      }
      if (data.type === "ready" && ++readyCount > 1) revealNewPage();
      try {
        onEvent(data);
      } catch (err) {
        // A merchant's callback error must not stop the next events from arriving.
        if (global.console) global.console.error(err);
      }
    }

    global.addEventListener("message", onMessage);
    element.appendChild(iframe);

    function depositSent(txHash) {
      if (typeof txHash !== "string" || !TX_HASH.test(txHash)) {
        throw new Error("Checkout depositSent: txHash must be a non-empty string of at most 200 " +
                        "printable ASCII characters, without spaces");
      }
      var target = iframe.contentWindow;
      if (!target) throw new Error("Checkout depositSent: the checkout is not mounted");
      // The checkout's exact origin, never "*": if the frame is showing anything else at this
      // moment, the browser drops the message rather than hand the hash to it.
      target.postMessage(
        { source: "checkout-parent", version: 1, type: "deposit-sent", txHash: txHash },
        checkoutOrigin);
    }

    return {
      iframe: iframe,
      origin: checkoutOrigin,
      depositSent: depositSent,
      destroy: function () {
        global.removeEventListener("message", onMessage);
        if (iframe.parentNode) iframe.parentNode.removeChild(iframe);
      }
    };
  }

  global.Checkout = global.Checkout || {};
  global.Checkout.mount = mount;
})(window);
