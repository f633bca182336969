/* filter.js: long lists (banks) get a text box that filters them (by letters or initials: "gtb"
 * finds Guaranty Trust Bank), on the pages that have one
 * (select[data-filterable]; data-filter-label is the box's label). Without JavaScript the select
 * stays a plain select. No dependencies, no eval.
 */
(function () {
  "use strict";

  /* Filterable selects: a long list (banks) gets a search box above it. The select itself is not
   * changed (same options, same name, same label), so it is submitted and read by assistive
   * technology exactly as without JavaScript; the box only hides the options that do not match. */
  var filterQueries = {}; // select id -> what was typed, kept across htmx swaps that re-render it
  var filterCount = 0;

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

  function enhanceFilterable(select) {
    if (select.disabled) return;
    if (!select.id) select.id = "checkout-filterable-" + (++filterCount);
    var inputId = select.id + "-filter";
    var input = document.getElementById(inputId);
    if (!input) {
      var wrap = document.createElement("div");
      wrap.className = "field-filter";
      var label = document.createElement("label");
      label.setAttribute("for", inputId);
      label.textContent = select.getAttribute("data-filter-label") || "Filter";
      input = document.createElement("input");
      input.type = "search";
      input.id = inputId;
      input.setAttribute("autocomplete", "off");
      input.setAttribute("aria-controls", select.id);
      // No name: the box is not part of the form and is never submitted.
      input.setAttribute("data-checkout-filter", "");
      input.addEventListener("input", function (event) {
        event.stopPropagation();
        var target = filterFor(input);
        filterQueries[input.getAttribute("aria-controls")] = input.value;
        if (target) applyFilter(target, input.value, true);
      });
      // The form's own triggers (a live quote on "input" or "keyup") are not about this box.
      var quiet = function (event) { event.stopPropagation(); };
      input.addEventListener("change", quiet);
      input.addEventListener("keyup", quiet);
      input.addEventListener("search", quiet);
      input.addEventListener("keydown", function (event) {
        // Enter in a search box would submit the form half filled in: it only filters here.
        if (event.key === "Enter") event.preventDefault();
      });
      var empty = document.createElement("p");
      empty.id = select.id + "-filter-empty";
      empty.className = "field-help field-filter-empty";
      empty.setAttribute("role", "status");
      empty.hidden = true;
      input.setAttribute("aria-describedby", empty.id);
      wrap.appendChild(label);
      wrap.appendChild(input);
      wrap.appendChild(empty);
      select.parentNode.insertBefore(wrap, select);
      if (filterQueries[select.id]) input.value = filterQueries[select.id];
    }
    if (input.value) applyFilter(select, input.value, false);
  }

  function enhanceFilterables(root) {
    var selects = (root || document).querySelectorAll("select[data-filterable]");
    for (var i = 0; i < selects.length; i++) enhanceFilterable(selects[i]);
  }

  function start() {
    enhanceFilterables(document);
    // A swap that re-renders a filterable select gets its box again (htmx then gives the focus
    // back to it by id).
    document.body.addEventListener("htmx:afterSettle", function () {
      enhanceFilterables(document);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
