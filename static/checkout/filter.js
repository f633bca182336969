/* filter.js: long lists (banks) have a text box that filters them (by letters or initials:
 * "gtb" finds Guaranty Trust Bank), on the pages that have one. The box is the server's
 * (macros.html: input[data-checkout-filter], aria-controls naming its select[data-filterable]),
 * in the page from its first paint, so nothing moves when this file comes in; what was typed
 * before then filters the list as it starts. Without JavaScript the box is not shown and the
 * select stays a plain select. No dependencies, no eval.
 */
(function () {
  "use strict";

  /* The select itself is not changed (same options, same name, same label), so it is submitted
   * and read by assistive technology exactly as without JavaScript; the box only hides the
   * options that do not match. */
  var filterQueries = {}; // select id -> what was typed, kept across htmx swaps that re-render it

  function fold(text) {
    var lower = String(text).toLowerCase();
    // "Banco" and "banco" match, and so do "Crédit" and "credit" where the browser can tell.
    return lower.normalize ? lower.normalize("NFD").replace(/[\u0300-\u036f]/g, "") : lower;
  }

  // What its customers call a bank: "Guaranty Trust Bank" is GTB, "United Bank for Africa" UBA,
  // "First Bank of Nigeria" FBN. The first letters of the name's capitalised words (or digits).
  function initials(text) {
    var words = String(text).split(/[\s\-\/&.,()]+/);
    var out = "";
    for (var i = 0; i < words.length; i++) {
      var first = words[i].charAt(0);
      if (first && first !== first.toLowerCase() || /[0-9]/.test(first)) out += first;
    }
    return fold(out);
  }

  // A name matches what was typed when it contains it, or (two letters or more) when its
  // initials start with it.
  function nameMatches(text, wanted) {
    return !wanted || fold(text).indexOf(wanted) !== -1 ||
      (wanted.length >= 2 && initials(text).indexOf(wanted) === 0);
  }

  function applyFilter(select, query, typed) {
    var wanted = fold(query.replace(/^\s+|\s+$/g, ""));
    var matches = [];
    for (var i = 0; i < select.options.length; i++) {
      var option = select.options[i];
      if (option.getAttribute("data-filter-disabled") === null) {
        // Remember which options the server disabled, so clearing the filter keeps them so.
        option.setAttribute("data-filter-disabled", option.disabled ? "1" : "0");
      }
      var placeholder = option.value === "";
      var match = nameMatches(option.textContent, wanted);
      var keep = match || placeholder || option.selected;
      // Hidden hides the option in most browsers' lists; disabled covers those that show hidden
      // options anyway (iOS), so a filtered-out bank cannot be picked by accident.
      option.hidden = !keep;
      option.disabled = !keep || option.getAttribute("data-filter-disabled") === "1";
      if (match && !placeholder && wanted && option.getAttribute("data-filter-disabled") !== "1") {
        matches.push(option);
      }
    }
    // Nothing left to choose from says so (read out: a status), rather than an empty list.
    var empty = document.getElementById(select.id + "-filter-empty");
    if (empty) {
      var none = !!wanted && matches.length === 0;
      empty.hidden = !none;
      empty.textContent = none ? select.getAttribute("data-filter-empty") || "" : "";
    }
    var chosen = select.options[select.selectedIndex];
    if (typed && wanted && chosen && chosen.value !== "" &&
        !nameMatches(chosen.textContent, wanted) && select.options[0].value === "") {
      // The user is looking for another bank: the one chosen before must not stay chosen out of
      // sight (a payout to the wrong bank). Back to "Choose", until the list shows the right one.
      select.value = "";
      applyFilter(select, query, false);
      select.dispatchEvent(new Event("change", { bubbles: true }));
      return;
    }
    if (typed && matches.length === 1 && !matches[0].selected) {
      select.value = matches[0].value;
      applyFilter(select, query, false); // the option selected until now no longer stays shown
      // As if the user had picked it: htmx triggers and the page's own listeners see a change.
      select.dispatchEvent(new Event("change", { bubbles: true }));
    }
  }

  function filterFor(input) {
    return document.getElementById(input.getAttribute("aria-controls") || "");
  }

  function isFilterBox(el) {
    return !!el && el.nodeType === 1 && el.hasAttribute("data-checkout-filter");
  }

  /* The box's events, heard on the document before anyone else (capture). Its typing filters;
   * it goes no further, since the form's own triggers (a live quote on "input" or "keyup") are
   * not about this box. Enter in a search box would submit the form half filled in: it only
   * filters here. */
  function onBoxEvent(event) {
    var box = event.target;
    if (!isFilterBox(box)) return;
    if (event.type === "keydown") {
      if (event.key === "Enter") event.preventDefault();
      return;
    }
    event.stopPropagation();
    if (event.type !== "input") return;
    filterQueries[box.getAttribute("aria-controls")] = box.value;
    var select = filterFor(box);
    if (select && !select.disabled) applyFilter(select, box.value, true);
  }

  /* What was typed in a box filters its list: typed before this file came in, or before an htmx
   * swap re-rendered the box (empty) with its select. At the swap itself, not at its settling
   * (20 ms on): until then the box would show empty over the whole list. */
  function applyTyped() {
    var boxes = document.querySelectorAll("input[data-checkout-filter]");
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      var id = box.getAttribute("aria-controls");
      if (!box.value && filterQueries[id]) box.value = filterQueries[id];
      var select = filterFor(box);
      if (box.value && select && !select.disabled) applyFilter(select, box.value, false);
    }
  }

  function start() {
    var types = ["input", "change", "keyup", "search", "keydown"];
    for (var i = 0; i < types.length; i++) document.addEventListener(types[i], onBoxEvent, true);
    applyTyped();
    document.body.addEventListener("htmx:afterSwap", applyTyped);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
