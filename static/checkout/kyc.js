/* kyc.js: the KYC step (templates/checkout/kyc/_step.html), loaded by that page only.
 *
 * - Each photo taken or chosen ([data-photo] file inputs) is shown in its [data-photo-preview]
 *   (a blob: URL, never sent anywhere), so the user sees it is sharp before sending it. A file
 *   the browser cannot show as a picture is flagged at its input at once, not after the upload.
 * - Where the browser can, the photo is shrunk to a JPEG of at most about 1 MB (longest side
 *   1600 px) before the form sends it: users pay for their data, and a phone's camera makes
 *   5-10 MB pictures. Redrawing also leaves the photo's metadata (GPS location) behind. A send
 *   pressed while a photo is still being shrunk waits for it ("Preparing your photos..."), 20 s
 *   at most: then the photos go as they are.
 * - Before the photos go, the form's fields are checked in the browser: an empty field or a
 *   mistyped number found on the server would cost the user their photos (a file input cannot
 *   be filled again by the server), so it is found here first. What is wrong is said under each
 *   field, in the page's words (the form's data-missing, data-photo-missing, data-mismatch), as
 *   the server says it: the browser's own bubble shows one field at a time, in the browser's
 *   language, and is gone at the next touch. A field says nothing more once it is put right.
 * - Without this script, or where shrinking fails, the photo is sent as it is: the server checks
 *   and shrinks it (checkout/kyc/photos.py) either way.
 * - The partner's page opens in a new tab; coming back to this tab checks the verdict at once.
 */
(function () {
  "use strict";

  var LONGEST_SIDE = 1600;
  var TARGET_BYTES = 1024 * 1024;
  // A send waits this long at most for the photos: a phone that never finishes shrinking one
  // (short of memory, say) sends them as they are, which the server shrinks too.
  var PREPARE_AT_MOST = 20000;
  var shrinking = 0;        // photos still being shrunk
  var sendWhenReady = null; // the form whose send waits for them
  var giveUp = null;        // the timer after which they go as they are
  var sendAsTheyAre = false; // true only while that send's submit event runs
  var statusSaidFor = null; // the field whose message the status line repeats

  function form() {
    return document.querySelector("form[data-kyc-form]");
  }

  function preview(input, file) {
    var img = input.parentNode.querySelector("[data-photo-preview]");
    if (!img || !window.URL || !URL.createObjectURL) return;
    if (img.dataset.url) URL.revokeObjectURL(img.dataset.url);
    img.dataset.url = URL.createObjectURL(file);
    img.onload = function () {
      input.setCustomValidity("");
      img.hidden = false;
    };
    img.onerror = function () {
      // Not a picture this browser can read: say so now, at the input (the server would too).
      img.hidden = true;
      var f = form();
      input.setCustomValidity((f && f.dataset.notPhoto) || "");
      if (!f || !say(f, input)) input.reportValidity();
    };
    img.src = img.dataset.url;
  }

  function encode(canvas, quality, done) {
    canvas.toBlob(function (blob) {
      if (blob && blob.size > TARGET_BYTES && quality > 0.5) {
        encode(canvas, quality - 0.15, done);
      } else {
        done(blob);
      }
    }, "image/jpeg", quality);
  }

  function shrink(file, done) {
    if (!window.createImageBitmap || !window.DataTransfer) return done(null);
    if (file.type === "image/jpeg" && file.size <= TARGET_BYTES) return done(null);
    createImageBitmap(file, { imageOrientation: "from-image" }).then(function (bitmap) {
      var scale = Math.min(1, LONGEST_SIDE / Math.max(bitmap.width, bitmap.height));
      var canvas = document.createElement("canvas");
      canvas.width = Math.max(1, Math.round(bitmap.width * scale));
      canvas.height = Math.max(1, Math.round(bitmap.height * scale));
      canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      if (bitmap.close) bitmap.close();
      encode(canvas, 0.85, function (blob) {
        done(blob && blob.size < file.size ? blob : null);
      });
    }, function () {
      done(null); // not an image the browser can read: the preview says so
    });
  }

  // -- what is wrong, said at the field ------------------------------------------------------

  function message(f, input) {
    var v = input.validity;
    if (v.customError) return input.validationMessage;     // set here, in the page's words
    if (input.type === "file") return f.dataset.photoMissing;
    return v.valueMissing ? f.dataset.missing : f.dataset.mismatch;
  }

  function describedBy(input, id, add) {
    var ids = (input.getAttribute("aria-describedby") || "").split(" ").filter(function (x) {
      return x && x !== id;
    });
    if (add) ids.push(id);
    if (ids.length) input.setAttribute("aria-describedby", ids.join(" "));
    else input.removeAttribute("aria-describedby");
  }

  // The field's message as the server writes it (templates/checkout/macros.html: field()).
  function say(f, input) {
    var wrap = input.id && document.getElementById(input.id + "-wrap");
    var text = message(f, input);
    if (!wrap || !text) return false;
    var id = input.id + "-error";
    var p = document.getElementById(id);
    if (!p) {
      p = document.createElement("p");
      p.className = "field-error";
      p.id = id;
      var preview = wrap.querySelector("[data-photo-preview]");
      wrap.insertBefore(p, preview || null);
    }
    p.textContent = text;
    p.setAttribute("data-said-here", "");
    wrap.classList.add("field--invalid");
    input.setAttribute("aria-invalid", "true");
    describedBy(input, id, true);
    return true;
  }

  // Put right: what this script said goes (what the server said stays until the next send).
  function unsay(input) {
    var p = input.id && document.getElementById(input.id + "-error");
    if (!p || !p.hasAttribute("data-said-here")) return;
    p.parentNode.classList.remove("field--invalid");
    p.parentNode.removeChild(p);
    input.removeAttribute("aria-invalid");
    describedBy(input, p.id, false);
    if (statusSaidFor === input) {
      statusSaidFor = null;
      status("");
    }
  }

  // Every field that is wrong, said; the first one focused. False if one could not be said.
  function sayAll(f) {
    var first = null;
    var allSaid = true;
    for (var i = 0; i < f.elements.length; i++) {
      var input = f.elements[i];
      if (!input.willValidate || input.validity.valid) continue;
      if (!say(f, input)) allSaid = false;
      first = first || input;
    }
    if (first) {
      // Focus moving to the field makes a screen reader read it with its message; a field that
      // has the focus already (Enter pressed in it) is read again through the status line.
      if (first === document.activeElement) {
        status(message(f, first));
        statusSaidFor = first;      // until it is put right
      }
      first.focus();
    }
    return allSaid;
  }

  ["input", "change"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      var input = event.target;
      if (input.form && input.form.matches("form[data-kyc-form]") && input.validity &&
          input.validity.valid) {
        unsay(input);
      }
    });
  });

  function status(text) {
    var el = document.querySelector("[data-photo-status]");
    if (el) el.textContent = text;
  }

  function sendWaiting(asTheyAre) {
    var waiting = sendWhenReady;
    if (!waiting) return;
    sendWhenReady = null;
    window.clearTimeout(giveUp);
    status("");
    sendAsTheyAre = !!asTheyAre;
    try {
      if (waiting.requestSubmit) waiting.requestSubmit();
      else waiting.submit();
    } finally {
      sendAsTheyAre = false;
    }
  }

  // A page left while its send waited (kept in the back/forward cache) must not send by itself
  // when it comes back: the user presses "Send" again.
  window.addEventListener("pagehide", function () {
    window.clearTimeout(giveUp);
    if (sendWhenReady) {
      sendWhenReady = null;
      status("");
    }
  });

  function photoReady() {
    shrinking -= 1;
    if (shrinking <= 0) sendWaiting();
  }

  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[data-photo]") || !input.files || !input.files[0]) {
      return;
    }
    var file = input.files[0];
    input.setCustomValidity("");
    unsay(input);
    preview(input, file);
    shrinking += 1;
    shrink(file, function (blob) {
      if (blob && input.files[0] === file) { // else another photo was chosen meanwhile
        var name = file.name.replace(/\.[^.]*$/, "") + ".jpg";
        var list = new DataTransfer();
        list.items.add(new File([blob], name, { type: "image/jpeg" }));
        input.files = list.files; // setting files fires no change event: no loop
        input.dataset.shrunk = String(blob.size);
      }
      photoReady();
    });
  });

  // Document numbers are printed in capitals: the server takes "ak1234567" as AK1234567, so the
  // browser's copy of the pattern must not refuse it first.
  function capitalise(f) {
    var inputs = f.querySelectorAll("input[pattern]");
    for (var i = 0; i < inputs.length; i++) {
      var input = inputs[i];
      if (input.validity.patternMismatch) {
        var upper = input.value.toUpperCase();
        try {
          if (new RegExp("^(?:" + input.getAttribute("pattern") + ")$").test(upper)) {
            input.value = upper;
          }
        } catch (err) {
          // A pattern this browser cannot compile must not stop the send: the server checks.
        }
      }
    }
  }

  document.addEventListener("submit", function (event) {
    var f = event.target;
    if (!f.matches || !f.matches("form[data-kyc-form]")) return;
    capitalise(f);
    status("");
    // The form is boosted (htmx posts it and the answer replaces the page): htmx listens on
    // the form itself, and sends whatever the default, so a send held here must not reach it.
    if (!f.checkValidity()) {
      event.preventDefault();
      event.stopPropagation();
      if (!sayAll(f)) f.reportValidity();
      return;
    }
    if (shrinking > 0 && !sendAsTheyAre) {
      event.preventDefault();
      event.stopPropagation();
      sendWhenReady = f;
      status(document.querySelector("[data-photo-status]").dataset.preparing || "");
      window.clearTimeout(giveUp);
      giveUp = window.setTimeout(function () { sendWaiting(true); }, PREPARE_AT_MOST);
    }
  }, true);

  // Back from the partner's page (opened in another tab): ask for the verdict now.
  var partnerOpened = false;
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("a[data-partner-page]")) {
      partnerOpened = true;
    }
  });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState !== "visible" || !partnerOpened) return;
    partnerOpened = false;
    var check = document.querySelector("a[data-check-again]");
    if (check) check.click();
  });
})();
