/* deposit.js: what the pages with a deadline do in the browser (the off-ramp's deposit page, the
 * on-ramp's pay page, the review's price clock), loaded by them only (before checkout.js, so it
 * listens before checkout.js posts "deposit-requested").
 *
 * - The parent page may answer with {source: "checkout-parent", version: 1, type: "deposit-sent",
 *   txHash} (embed.js's handle.depositSent): the page's form[data-deposit-form] gets the hash in
 *   its input[name=tx_hash] and is submitted, once per page. Only the parent window, from the
 *   exact parent origin (<meta name="checkout-parent-origin">), is listened to.
 * - [data-countdown-to="<ISO 8601 UTC>"] shows the time left (mm:ss or h:mm:ss). A deadline
 *   that passes stays, marked expired (in the error colour); a wait (data-countdown-wait="ID") that
 *   ends goes, and the control #ID it held back is enabled.
 * No dependencies, no eval.
 */
(function () {
  "use strict";

  var VERSION = 1;
  var originMeta = document.querySelector('meta[name="checkout-parent-origin"]');
  var parentOrigin = originMeta ? originMeta.getAttribute("content") : null;
  var framed = window.parent && window.parent !== window;

  function announce(text) {
    var region = document.getElementById("checkout-announcer");
    if (region) region.textContent = text;
  }

  /* The shop's own wallet (embed.js: handle.depositSent(txHash)). The parent page sends the hash of
   * a transfer it made itself; the page's deposit form carries it to the server exactly as if the
   * user had pasted it, so the server's checks and its confirm-once rule apply unchanged. */
  var depositSubmitted = false;

  function isTransactionHash(value) {
    // The same rule as embed.js: 1 to 200 printable ASCII characters, no spaces.
    return typeof value === "string" && /^[\x21-\x7e]{1,200}$/.test(value);
  }

  function submitterOf(form) {
    var buttons = form.querySelectorAll('button, input[type="submit"], input[type="image"]');
    for (var i = 0; i < buttons.length; i++) {
      var b = buttons[i];
      var type = (b.getAttribute("type") || "submit").toLowerCase();
      if ((type === "submit" || type === "image") && !b.disabled && b.form === form) return b;
    }
    return null;
  }

  function submitDeposit(txHash) {
    if (depositSubmitted) return; // once per page: a second call, or a replay, changes nothing
    var form = document.querySelector("form[data-deposit-form]");
    if (!form) return; // not the page that asks for a deposit: nothing to do here
    var input = form.querySelector('input[name="tx_hash"]');
    if (!input) return;
    depositSubmitted = true;
    input.value = txHash;
    var submitter = submitterOf(form);
    if (typeof form.requestSubmit === "function") {
      // requestSubmit (unlike submit) fires "submit", so htmx (hx-post) or the browser (a plain
      // POST) sends it, and the form's own validation runs. The submitter keeps its name=value.
      if (submitter) form.requestSubmit(submitter);
      else form.requestSubmit();
    } else if (submitter) {
      submitter.click(); // older browsers: a click on the submit button is the same thing
    } else {
      var button = document.createElement("button");
      button.type = "submit";
      button.hidden = true;
      form.appendChild(button);
      button.click();
      form.removeChild(button);
    }
  }

  function onParentMessage(event) {
    // Only the window that frames us, and only from the origin our events go to: any other
    // window (a popup, another frame, a page that frames us without being the merchant) is
    // ignored before its data is even looked at.
    if (!framed || !parentOrigin) return;
    if (event.source !== window.parent || event.origin !== parentOrigin) return;
    var data = event.data;
    if (!data || typeof data !== "object") return;
    if (data.source !== "checkout-parent" || data.version !== VERSION) return;
    if (data.type === "deposit-sent" && isTransactionHash(data.txHash)) submitDeposit(data.txHash);
  }

  /* Countdowns: [data-countdown-to] shows the time left to its deadline. The server renders the
   * deadline itself as text next to it, so this is a convenience, not the only way to know. Nothing
   * is announced every second (a live region ticking would drown everything else out); an element
   * with data-countdown-announce has that text announced once, when one minute is left. */
  var countdownTimer = null;
  // deadline -> {above: seen with more than a minute left, told: announced}
  var countdownState = {};

  function deadlineOf(value) {
    if (!value) return NaN;
    // The deadline is UTC; a value without a zone would otherwise be read as local time.
    var text = /(Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : value + "Z";
    return Date.parse(text);
  }

  function pad(n) {
    return n < 10 ? "0" + n : String(n);
  }

  function formatLeft(seconds) {
    var h = Math.floor(seconds / 3600);
    var m = Math.floor((seconds % 3600) / 60);
    var s = seconds % 60;
    return h > 0 ? h + ":" + pad(m) + ":" + pad(s) : pad(m) + ":" + pad(s);
  }

  // Updates every countdown; returns the milliseconds until the next one shows another second,
  // or -1 when none is left running.
  function updateCountdowns() {
    var nodes = document.querySelectorAll("[data-countdown-to]:not([data-countdown-expired])");
    var now = Date.now();
    var next = -1;
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      var to = node.getAttribute("data-countdown-to");
      var deadline = deadlineOf(to);
      if (isNaN(deadline)) continue; // not a date: the server's own text stays as it is
      var left = Math.max(0, Math.ceil((deadline - now) / 1000));
      var target = node.querySelector("[data-countdown-text]") || node;
      var text = formatLeft(left);
      if (target.textContent !== text) target.textContent = text;
      if (node.hidden) node.hidden = false; // rendered hidden when it has nothing to say without us
      // Keyed by the deadline, not the element: a poll that re-renders the block keeps the state.
      var state = countdownState[to] || (countdownState[to] = { above: false, told: false });
      if (left > 60) state.above = true;
      else if (left > 0 && state.above && !state.told) {
        state.told = true;
        var message = node.getAttribute("data-countdown-announce");
        if (message) announce(message);
      }
      if (left === 0) {
        node.setAttribute("data-countdown-expired", "");
        var held = node.getAttribute("data-countdown-wait");
        if (held !== null) {
          // A wait over is not a deadline missed: "00:00" beside a button still disabled would
          // only say that something is wrong. The countdown goes and the button is ready.
          node.hidden = true;
          var control = held && document.getElementById(held);
          if (control) control.disabled = false;
        }
        // For the page's own reaction (hx-trigger="countdown-expired"), e.g. fetch a new price.
        node.dispatchEvent(new CustomEvent("countdown-expired", { bubbles: true }));
      } else {
        // The display changes when the time left crosses a whole second of *this* deadline.
        var change = (deadline - now) % 1000 || 1000;
        if (next < 0 || change < next) next = change;
      }
    }
    return next;
  }

  function runCountdowns() {
    if (countdownTimer !== null) {
      window.clearTimeout(countdownTimer);
      countdownTimer = null;
    }
    var next = updateCountdowns();
    if (next < 0) return; // none left running: stop until a swap brings a new one
    // Just after the next change rather than every 1000 ms from now: timers drift, and a display
    // that lags its deadline by most of a second reads 00:01 when the time is already up.
    countdownTimer = window.setTimeout(runCountdowns, next + 20);
  }

  // Listening at once: the parent's answer to deposit-requested is a reply to checkout.js's post.
  window.addEventListener("message", onParentMessage);

  function start() {
    runCountdowns();
    // A poll that re-renders a countdown gets it ticking again.
    document.body.addEventListener("htmx:afterSettle", runCountdowns);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
