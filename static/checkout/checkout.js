/* checkout.js: the few things the checkout's pages do in the browser. No dependencies, no eval.
 *
 * - Posts events to the parent page ({source: "checkout", version: 1, type, sessionId, ...}) with
 *   targetOrigin = the exact origin in <meta name="checkout-parent-origin">, never "*". Without that
 *   meta (or when not framed) nothing is posted.
 * - "ready" once, "resize" with the document height whenever it changes, "step-viewed" (flow and
 *   step, from <main>) once per step of the session.
 * - Elements [data-checkout-event] (rendered by the parent_event macro) become events, on load and
 *   after every htmx swap, each once per data-event-key (in this page and, when available, in
 *   sessionStorage, so a reload does not repeat "order-created").
 * - htmx requests of a framed page carry "X-Checkout-Framed: 1" (the server sends parent events
 *   only to framed pages: checkout.tracking.framing).
 * - [data-copy] buttons copy their text; [data-checkout-close] posts "closed" before the link
 *   navigates; [data-leave-frame] buttons open their data-href in the top window on click.
 * - Focus is never lost: a page that comes back with form errors focuses the first invalid field,
 *   and when an htmx swap replaces the focused control (a select, a radio, a copy button in a
 *   polled status block), the same control in the new content gets the focus back.
 * - A step change (a page loaded from another page of this session) moves focus to the page's
 *   main heading, so a screen reader starts reading the new step, unless the page focused an
 *   invalid field or the user already moved the focus; the first page of a session leaves focus
 *   where the merchant's page has it.
 * - A page that answers a post (body[data-checkout-posted]: the KYC step's refused form, shown in
 *   place because its values are never stored) replaces its history entry with a plain one, so
 *   Back or a reload loads the page instead of asking to send the form again. The other forms
 *   answer with a redirect (POST, redirect, GET) and need nothing here.
 * - Without this script the pages work as plain forms and links (see "Without JavaScript" in
 *   checkout.css): it marks <html> with "checkout-js", which shows the copy buttons, and drops the
 *   <noscript> blocks an htmx swap brings in (parsed outside the page, their controls would be
 *   real ones: a hidden "Update price" would become the form's default button, taking Enter).
 * - A select asks for its part of the page again on a choice made, not on each key of the
 *   browser's type-ahead (see "Type-ahead" below); an answer that would replace a select the user
 *   is still typing on is dropped, since the choice brings a newer one.
 * - A part of the page being fetched again says so: the region an htmx request will replace has
 *   aria-busy="true" while the request is on its way (checkout.css shows it).
 * - What only some pages need has a file of its own, which those pages load before this one:
 *   deposit.js (the shop's own wallet, countdowns) and filter.js (filterable selects). The first
 *   page of a flow stays light on a phone's data plan.
 * - A step's form is boosted (hx-boost, macros.html): htmx posts it in the background and its
 *   answer, the next step's whole page, replaces this one, with the address bar and the history
 *   following (checkout.htmx): one round trip instead of post, redirect and get. Such a page
 *   change is a page like any other here: the window back at its top, focus on the new step's
 *   heading (or its first invalid field), "ready" posted (embed.js brings the frame's top into
 *   view), and a file of its own it needs (filter.js, kyc.js) loaded. An error page is shown
 *   like any answer. Back and reload load the page from the server (no snapshots: htmx-config
 *   in base.html). A form that could not be sent at all (no network) says so above its button.
 */
(function () {
  "use strict";

  // First, before anything can fail: the copy buttons work from here on (checkout.css).
  document.documentElement.classList.add("checkout-js");

  // Same URL, same state: only the entry's post is dropped (tests/browser/test_kyc_e2e.py).
  if (document.body && document.body.hasAttribute("data-checkout-posted") &&
      window.history && window.history.replaceState) {
    window.history.replaceState(window.history.state, "", window.location.href);
  }

  var VERSION = 1;
  var STORAGE_PREFIX = "checkout-event:";

  function meta(name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute("content") : null;
  }

  var parentOrigin = meta("checkout-parent-origin");
  var sessionId = meta("checkout-session");
  var framed = window.parent && window.parent !== window;
  var posted = {};

  function post(type, extra) {
    if (!framed || !parentOrigin) return;
    var message = { source: "checkout", version: VERSION, type: type, sessionId: sessionId };
    if (extra) {
      for (var key in extra) {
        if (Object.prototype.hasOwnProperty.call(extra, key)) message[key] = extra[key];
      }
    }
    try {
      window.parent.postMessage(message, parentOrigin);
    } catch (err) {
      // A malformed origin in the meta would throw; the page must keep working regardless.
    }
  }

  function storage() {
    try {
      return window.sessionStorage;
    } catch (err) {
      return null; // storage blocked in this third-party context
    }
  }

  function seen(key) {
    if (posted[key]) return true;
    var store = storage();
    try {
      return !!(store && store.getItem(STORAGE_PREFIX + key));
    } catch (err) {
      return false;
    }
  }

  function remember(key) {
    posted[key] = true;
    var store = storage();
    try {
      if (store) store.setItem(STORAGE_PREFIX + key, "1");
    } catch (err) {
      // Quota or privacy mode: the in-page record still prevents repeats on this page.
    }
  }

  // Keys of a message that identify it: data-extra from the server never replaces them, so an event
  // always says truthfully what it is and which session sent it.
  // "order" too: data-order is its one channel.
  var RESERVED = { source: 1, version: 1, type: 1, sessionId: 1, order: 1 };

  // data-extra='{"deposit": {...}}' (the parent_event macro's ``extra``): its keys join the
  // message.
  function eventExtra(node) {
    var extra = {};
    var raw = node.getAttribute("data-extra");
    if (!raw) return extra;
    var parsed;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      return extra;
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return extra;
    for (var key in parsed) {
      // "__proto__" as a plain key would set the message's prototype, not a property.
      if (!Object.prototype.hasOwnProperty.call(parsed, key) || key === "__proto__") continue;
      if (Object.prototype.hasOwnProperty.call(RESERVED, key)) continue;
      extra[key] = parsed[key];
    }
    return extra;
  }

  function postPageEvents(root) {
    var nodes = (root || document).querySelectorAll("[data-checkout-event]");
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      var type = node.getAttribute("data-checkout-event");
      var key = (sessionId || "") + ":" + (node.getAttribute("data-event-key") || type);
      if (seen(key)) continue;
      var extra = eventExtra(node);
      var order = node.getAttribute("data-order");
      if (order) {
        try {
          extra.order = JSON.parse(order);
        } catch (err) {
          extra.order = null;
        }
      }
      remember(key);
      post(type, extra);
    }
  }

  // The step on screen (<main data-checkout-step>), once per step of the session in this tab:
  // the merchant's funnel. Only the flow and the step's name.
  function postStepViewed() {
    var main = document.getElementById("checkout-main");
    var step = main && main.getAttribute("data-checkout-step");
    if (!step) return;
    var key = (sessionId || "") + ":step-viewed:" + step;
    if (seen(key)) return;
    remember(key);
    post("step-viewed", { flow: main.getAttribute("data-checkout-flow"), step: step });
  }

  var lastHeight = 0;
  function reportHeight() {
    // Reading the height lays the page out: not worth it with nobody to tell.
    if (!framed || !parentOrigin) return;
    var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height !== lastHeight) {
      lastHeight = height;
      post("resize", { height: height });
    }
  }

  function announce(text) {
    var region = document.getElementById("checkout-announcer");
    if (region) region.textContent = text;
  }

  function copyWithSelection(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "checkout-offscreen";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (err) {
      ok = false;
    }
    document.body.removeChild(area);
    return ok;
  }

  function copy(button) {
    var text = button.getAttribute("data-copy") || "";
    var label = button.textContent;
    var done = function () {
      var copied = button.getAttribute("data-copied-label") || "Copied";
      button.textContent = copied;
      announce(copied);
      window.setTimeout(function () { button.textContent = label; }, 2000);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () {
        if (copyWithSelection(text)) done();
      });
    } else if (copyWithSelection(text)) {
      done();
    }
  }

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    var copyButton = target.closest("[data-copy]");
    if (copyButton) {
      event.preventDefault();
      copy(copyButton);
      return;
    }
    var closer = target.closest("[data-checkout-close]");
    if (closer) post("closed");
    var leave = target.closest("[data-leave-frame]");
    if (leave && leave.tagName === "A" && !leave.getAttribute("target")) {
      // Payment pages refuse to be framed: the link must replace the merchant's page.
      leave.setAttribute("target", "_top");
    } else if (leave && leave.tagName !== "A") {
      // A link with target="_top" leaves by itself; a button needs the click's user activation,
      // which lets a cross-origin frame navigate the top window.
      var href = leave.getAttribute("data-href");
      if (href) {
        event.preventDefault();
        window.open(href, "_top");
      }
    }
  });

  // What identifies a control across a swap that re-renders it: its id (htmx itself restores
  // those), else its name (the checked one of a radio group), else what it copies or links to,
  // else the form it sends (a button without a name: the review's "Confirm", re-rendered when
  // the price clock renews the price), else the page's heading (where a new step puts focus).
  function focusSelector(el) {
    if (!el || el === document.body || el === document.documentElement || !window.CSS) return null;
    // A filter box is ours, not the server's: it is re-created after the swap, with the same id.
    if (el.hasAttribute("data-checkout-filter") && el.id) return ["#" + CSS.escape(el.id)];
    var name = el.getAttribute("name");
    if (name) {
      var type = (el.getAttribute("type") || "").toLowerCase();
      var base = '[name="' + CSS.escape(name) + '"]';
      return type === "radio" ? [base + ":checked", base] : [base];
    }
    var copyText = el.getAttribute("data-copy");
    if (copyText !== null) return ['[data-copy="' + CSS.escape(copyText) + '"]'];
    var href = el.getAttribute("href");
    if (el.tagName === "A" && href) return ['a[href="' + CSS.escape(href) + '"]'];
    var action = el.form && el.type === "submit" && el.form.getAttribute("action");
    if (action) return ['form[action="' + CSS.escape(action) + '"] [type="submit"]'];
    if (el.matches("main h1")) return ["main h1"];
    return null;
  }

  // Text an answer gives for the live region (data-checkout-announce: the review's price renewed
  // by its clock), said once and then dropped, so that nothing says it again.
  function announceSwapped() {
    var said = document.querySelector("[data-checkout-announce]");
    if (!said) return;
    announce(said.textContent.trim());
    said.parentNode.removeChild(said);
  }

  var focusBeforeSwap = null;

  function restoreFocus() {
    var wanted = focusBeforeSwap;
    focusBeforeSwap = null;
    if (!wanted) return;
    var active = document.activeElement;
    if (active && active !== document.body && document.documentElement.contains(active)) return;
    for (var i = 0; i < wanted.length; i++) {
      var el = document.querySelector(wanted[i]);
      if (el && !el.disabled) {
        el.focus({ preventScroll: true });
        return;
      }
    }
  }

  function focusFirstError() {
    // Radio buttons carry no aria-invalid (not an attribute of theirs): a group of them that
    // came back with an error is a fieldset.field--invalid. One selector list, so the first in
    // the page's order wins ("How you pay" above "Network").
    var invalid = document.querySelector('[aria-invalid="true"]:not([disabled]), ' +
      'fieldset.field--invalid input[type="radio"]:not([disabled])');
    if (!invalid) return false;
    if (invalid.type === "radio" && invalid.closest) {
      // A group with an answer chosen (refused for its own reason) starts at that answer.
      var group = invalid.closest("fieldset");
      var chosen = group && group.querySelector('input[type="radio"]:checked:not([disabled])');
      if (chosen) invalid = chosen;
    }
    invalid.focus();
    return document.activeElement === invalid;
  }

  // A page loaded from another page of this session is a step change: the user acted in the frame
  // (the frame has the focus) and a screen reader should start at the new step's heading, not at
  // the top of an unknown page. The session's first page comes from the merchant's page (or from
  // /launch, which keeps the merchant's page as the referrer): it must not take the focus away.
  // Our Referrer-Policy (same-origin) gives our own pages the full URL, and the session's path
  // tells its pages apart from a merchant's page on the same origin.
  function isStepChange() {
    var referrer = document.referrer;
    if (!referrer) return false;
    var from;
    try {
      from = new URL(referrer);
    } catch (err) {
      return false;
    }
    if (from.origin !== window.location.origin) return false;
    if (!sessionId) return true;
    return from.pathname.indexOf("/s/" + sessionId + "/") !== -1;
  }

  function focusStepHeading() {
    // A page may name what comes next for the user (the deposit page back from the sandbox's
    // test wallet, its hash filled in: "I have sent it"); else the step's heading.
    var heading = document.querySelector("main [data-autofocus]") ||
      document.querySelector("main h1");
    if (!heading) return;
    // A quick keyboard user may have tabbed into the page before this script ran: their focus
    // wins, or the rest of what they type would land nowhere.
    var active = document.activeElement;
    if (active && active !== document.body && active !== document.documentElement) return;
    // A heading takes focus only with tabindex=-1; a button named by data-autofocus already can.
    if (!heading.hasAttribute("data-autofocus") && !heading.hasAttribute("tabindex")) {
      heading.setAttribute("tabindex", "-1");
    }
    // No scroll from here: embed.js scrolls the merchant's page to the frame's top on this page's
    // "ready", and a focus scroll would fight it (it centres the heading in the viewport).
    heading.focus({ preventScroll: true });
  }

  /* A form sent once: a second press while the first answer is on its way (a slow network, an
   * impatient thumb) sends nothing. The server would not create anything twice either (the
   * create-once protocol), but a second POST can only confuse. Scripts that hold a send back
   * (kyc.js, while photos shrink) prevent it first: such a send does not count. */
  function onSubmit(event) {
    var form = event.target;
    if (!form || form.tagName !== "FORM" || event.defaultPrevented) return;
    if (form.getAttribute("aria-busy") === "true") {
      event.preventDefault();
      return;
    }
    form.setAttribute("aria-busy", "true");
    var sending = meta("checkout-sending");
    if (sending) announce(sending);
    // A plain form's post takes this page away: from now on no request of it starts (the price
    // clock's, a poll), and no answer still on its way acts. An HX-Redirect landing meanwhile
    // would cut the post's own page short ("Confirm" and its order's page, whose first showing
    // carries order-created).
    var target = (form.getAttribute("target") || "").toLowerCase();
    if (!target || target === "_self") departed = true;
  }

  /* A boosted form (a step's "Continue") is sent once too, and once it is on its way this page
   * is leaving: no other request of it starts (a choice, a price, a poll), since its answer
   * could only undo or cut short the step being sent. htmx takes the form's submit before
   * onSubmit sees it, so this is decided at htmx:confirm, before htmx queues anything. */
  var leaving = false;   // a boosted form is on its way
  var departed = false;  // a page is being opened (HX-Redirect): this one is done

  function isBoostedForm(el) {
    return !!el && el.tagName === "FORM" && el.getAttribute("hx-boost") === "true";
  }

  function onLeavingConfirm(event) {
    if (leaving || departed) {
      event.preventDefault();
      return;
    }
    var form = event.detail && event.detail.elt;
    if (!isBoostedForm(form)) return;
    leaving = true;
    forgetHeld();
    form.setAttribute("aria-busy", "true");
    var sending = meta("checkout-sending");
    if (sending) announce(sending);
  }

  // The files a page loads in its <head> (pages differ by deposit.js, filter.js, kyc.js).
  function scriptsOf(doc) {
    var found = [];
    var nodes = doc.querySelectorAll("head script[src]");
    for (var i = 0; i < nodes.length; i++) found.push(nodes[i].getAttribute("src"));
    return found;
  }

  // The files a whole page (a boosted answer) loads that this one has not (htmx swaps its body
  // only). Each is loaded once per document: they start on the page they find, as after a
  // page load, and follow later swaps themselves.
  function scriptsMissingFor(html) {
    var loaded = scriptsOf(document);
    var wanted = scriptsOf(new DOMParser().parseFromString(html, "text/html"));
    return wanted.filter(function (src) { return loaded.indexOf(src) === -1; });
  }

  function loadScripts(sources) {
    for (var i = 0; i < sources.length; i++) {
      var script = document.createElement("script");
      script.src = sources[i];
      script.async = false; // in the page's order (kyc.js before filter.js)
      document.head.appendChild(script);
    }
  }

  function unbusy(root) {
    var forms = (root || document).querySelectorAll('form[aria-busy="true"]');
    for (var i = 0; i < forms.length; i++) forms[i].removeAttribute("aria-busy");
  }

  /* A step's form that never reached the server (no network, the connection dropped on the way):
   * said above its button, in the page's words; the button is free again (htmx:afterRequest).
   * Without this a press sent nothing and said nothing: the page stayed as it was. */
  function sendFailed(event) {
    var form = event.detail && event.detail.elt;
    if (!form || form.tagName !== "FORM" || !document.documentElement.contains(form)) return;
    // A new one each time: an alert put in the page is read out, the same words again too.
    var said = form.querySelector("[data-send-failed]");
    if (said) said.parentNode.removeChild(said);
    var notice = document.createElement("div");
    notice.className = "notice notice--error";
    notice.setAttribute("role", "alert");
    notice.setAttribute("data-send-failed", "");
    var text = document.createElement("p");
    text.textContent = meta("checkout-send-failed") || "";
    notice.appendChild(text);
    var button = form.querySelector('[type="submit"]');
    form.insertBefore(notice, button && button.parentNode === form ? button : null);
  }

  /* What the user types while a part of the page is being fetched again (a select changed, and
   * the form comes back with the choices that go with it) is not lost: a text field the user
   * typed into since the request left gets their text back, if the server sent back what it
   * was sent (a server that changed the value, like clearing an amount whose unit changed,
   * wins). */
  function textFields(root) {
    return root.querySelectorAll('input[name]:not([type]), input[name][type="text"],' +
      ' input[name][type="email"], input[name][type="tel"], textarea[name]');
  }

  // Each request keeps what the fields held when it left (requests overlap: a price asked while
  // typing, a form asked again for a select).
  function rememberSent(event) {
    var xhr = event.detail && event.detail.xhr;
    if (!xhr) return;
    var sent = {};
    var fields = textFields(document);
    for (var i = 0; i < fields.length; i++) sent[fields[i].name] = fields[i].value;
    xhr.checkoutSentText = sent;
  }

  function typedSinceSent(event) {
    var xhr = event.detail && event.detail.xhr;
    var sentText = xhr && xhr.checkoutSentText;
    if (!sentText) return null;
    var typed = {};
    var fields = textFields(document);
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.name in sentText && f.value !== sentText[f.name]) {
        typed[f.name] = { sent: sentText[f.name], value: f.value, focused: f === document.activeElement };
      }
    }
    return typed;
  }

  function giveBackTyped(typed) {
    if (!typed) return;
    for (var name in typed) {
      if (!Object.prototype.hasOwnProperty.call(typed, name)) continue;
      var field = document.querySelector('[name="' + CSS.escape(name) + '"]');
      if (!field || field.readOnly || field.value !== typed[name].sent) continue;
      field.value = typed[name].value;
      if (typed[name].focused) {
        field.focus({ preventScroll: true });
        var end = field.value.length;
        try { field.setSelectionRange(end, end); } catch (err) { /* not a text type */ }
      }
      // As if typed now: the live price follows the text the user sees.
      field.dispatchEvent(new Event("input", { bubbles: true }));
    }
  }

  /* Type-ahead. On a focused, closed select, Chromium picks the first option matching what was
   * typed so far, and fires "change" for each letter that lands on another option: "celo" is
   * Celo, then (if the select were re-rendered, its search started again) Ethereum, Lisk,
   * Optimism. So a change made from the keyboard (letters, or arrow keys) asks for nothing at
   * once: it is held back until the choice is made, by Enter, by the focus leaving the select, or
   * by a pause as long as type-ahead's own memory (one second in Chromium and Firefox). A pick
   * from the list (a pointer, a phone's picker) fires no key on the select and asks at once. */
  var TYPE_AHEAD_MEMORY = 1000;
  // Type-ahead's "change" comes within the handling of the key that made it.
  var KEY_CHANGE_WINDOW = 300;
  var lastKey = { select: null, at: 0 };
  var held = null; // {select, issue, timer}: the request a keyboard change holds back

  function commitHeld() {
    if (!held || leaving || departed) return;
    var choice = held;
    held = null;
    window.clearTimeout(choice.timer);
    // true: past htmx:confirm (this handler) this time. The form is read now, as it stands.
    if (document.documentElement.contains(choice.select)) choice.issue(true);
  }

  function forgetHeld() {
    if (held) window.clearTimeout(held.timer);
    held = null;
  }

  function holdBack(select, issue) {
    forgetHeld();
    held = { select: select, issue: issue,
             timer: window.setTimeout(commitHeld, TYPE_AHEAD_MEMORY) };
  }

  function onSelectKey(event) {
    var select = event.target;
    if (!(select instanceof HTMLSelectElement)) return;
    lastKey = { select: select, at: Date.now() };
    if (!held || held.select !== select) return;
    if (event.key === "Enter") {
      commitHeld();
    } else {
      // Still typing: the pause starts again (type-ahead remembers from the last key).
      window.clearTimeout(held.timer);
      held.timer = window.setTimeout(commitHeld, TYPE_AHEAD_MEMORY);
    }
  }

  function onConfirm(event) {
    var detail = event.detail || {};
    var select = detail.elt;
    var trigger = detail.triggeringEvent;
    if (!(select instanceof HTMLSelectElement) || !trigger || trigger.type !== "change") return;
    if (lastKey.select !== select || Date.now() - lastKey.at > KEY_CHANGE_WINDOW) return;
    event.preventDefault();
    holdBack(select, detail.issueRequest);
  }

  /* A region being fetched again is aria-busy until its answer is in (or the request is given
   * up). Counted per region: a request replaced by a newer one ends after the newer one began.
   * Not for a block that polls itself (hx-target="this"), nor a request that swaps nothing. */
  function busyRegion(detail) {
    var target = detail && detail.target;
    var elt = detail && detail.elt;
    // A boosted form's target is the whole body: the form itself says it is on its way.
    if (!target || !elt || target === elt || detail.boosted) return null;
    var swap = elt.closest("[hx-swap]");
    if (swap && swap.getAttribute("hx-swap") === "none") return null;
    return target;
  }

  function markBusy(event) {
    var region = busyRegion(event.detail);
    if (!region) return;
    event.detail.checkoutBusy = region;
    region.checkoutBusyCount = (region.checkoutBusyCount || 0) + 1;
    region.setAttribute("aria-busy", "true");
  }

  function unmarkBusy(event) {
    var region = event.detail && event.detail.checkoutBusy;
    if (!region) return;
    event.detail.checkoutBusy = null; // once, even if htmx tells a second element of the end
    region.checkoutBusyCount = Math.max(0, (region.checkoutBusyCount || 1) - 1);
    if (!region.checkoutBusyCount) region.removeAttribute("aria-busy");
  }

  function start() {
    post("ready");
    document.addEventListener("submit", onSubmit);
    document.addEventListener("submit", forgetHeld);
    document.addEventListener("keydown", onSelectKey, true);
    document.addEventListener("focusout", function (event) {
      if (held && event.target === held.select) commitHeld();
    });
    document.body.addEventListener("htmx:confirm", onConfirm);
    document.body.addEventListener("htmx:confirm", onLeavingConfirm);
    document.body.addEventListener("htmx:beforeOnLoad", function (event) {
      if (departed) event.preventDefault();     // this page is going: its answers go with it
    });
    document.body.addEventListener("htmx:beforeRequest", markBusy);
    document.body.addEventListener("htmx:sendError", sendFailed);
    document.body.addEventListener("htmx:timeout", sendFailed);
    document.body.addEventListener("htmx:afterRequest", unmarkBusy);
    // Back to a page from the browser's cache: its forms are not on their way any more. Not the
    // pageshow of the page's own load, which can come after a form was sent (an image still on
    // its way, on a weak signal).
    window.addEventListener("pageshow", function (event) {
      if (!event.persisted) return;
      leaving = departed = false;
      unbusy(document);
    });
    // The height, asked in a task of its own: asked here, the layout it forces would join this
    // script's and htmx's start-up in the longest task of the page's load. Not left to the
    // ResizeObserver's first report: a cross-site frame out of view (a checkout below the shop's
    // fold) is not drawn, so that report would wait until the user scrolls to it.
    window.setTimeout(reportHeight, 0);
    if (window.ResizeObserver) {
      new ResizeObserver(reportHeight).observe(document.documentElement);
    } else {
      window.addEventListener("resize", reportHeight);
    }
    postPageEvents(document);
    postStepViewed();
    if (!focusFirstError() && (isStepChange() || document.querySelector("main [data-autofocus]"))) {
      focusStepHeading();
    }
    var typedBeforeSwap = null;
    var newPage = false; // the swap under way is a boosted answer: a new page
    var newScripts = []; // the files it needs that this document has not loaded
    document.body.addEventListener("htmx:beforeSwap", function (event) {
      var detail = event.detail || {};
      if (detail.boosted) {
        if (detail.xhr.status >= 400) {
          // The friendly error page (a plain form's answer would show it too), not nothing.
          detail.shouldSwap = true;
          detail.isError = false;
        }
        newPage = detail.shouldSwap;
        newScripts = newPage ? scriptsMissingFor(detail.serverResponse || "") : [];
        forgetHeld();
        focusBeforeSwap = null;
        typedBeforeSwap = null;
        return;
      }
      var target = event.detail && event.detail.target;
      if (held && target && target.contains(held.select)) {
        // The user is choosing on a select this answer would replace (and with it what they
        // typed so far): the answer is for older choices, and the one being made brings a newer.
        event.detail.shouldSwap = false;
        return;
      }
      focusBeforeSwap = focusSelector(document.activeElement);
      typedBeforeSwap = typedSinceSent(event);
    });
    document.body.addEventListener("htmx:beforeRequest", rememberSent);
    document.body.addEventListener("htmx:afterRequest", function (event) {
      // A page being opened (HX-Redirect) stays "sending" until it is.
      var xhr = event.detail && event.detail.xhr;
      if (departed || (xhr && xhr.getResponseHeader && xhr.getResponseHeader("HX-Redirect"))) {
        departed = true;
        return;
      }
      if (event.detail && event.detail.boosted) leaving = false;  // answered, or given up
      unbusy(document);
    });
    document.body.addEventListener("htmx:afterSwap", function () {
      var blocks = document.body.querySelectorAll("noscript");
      for (var i = 0; i < blocks.length; i++) blocks[i].parentNode.removeChild(blocks[i]);
    });
    document.body.addEventListener("htmx:configRequest", function (event) {
      // fetch/XHR requests carry "Sec-Fetch-Dest: empty": tell the server this page is framed,
      // so that it records parent events as sent only when there is a parent to receive them.
      if (framed && parentOrigin) event.detail.headers["X-Checkout-Framed"] = "1";
    });
    document.body.addEventListener("htmx:afterSettle", function () {
      if (newPage) {
        // As on a page loaded: at its top, focus on the new step, "ready" before its events.
        newPage = false;
        window.scrollTo(0, 0);
        if (!focusFirstError()) focusStepHeading();
        post("ready");
        postStepViewed();
        // After the page is in: a script of its own (filter.js, kyc.js) starts on it. The page
        // works without it meanwhile, as without JavaScript. Only steps come in place: the
        // order's pages (deposit.js, which must hear the page's first events) are loaded.
        loadScripts(newScripts);
        newScripts = [];
      }
      // The whole page: a swap may have replaced the very element htmx reports as its target.
      postPageEvents(document);
      giveBackTyped(typedBeforeSwap);
      typedBeforeSwap = null;
      restoreFocus();
      announceSwapped();
      reportHeight();
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
