/* kyc.js: the KYC step's photos (templates/checkout/kyc/_step.html), loaded by that page only.
 *
 * - Each photo taken or chosen ([data-photo] file inputs) is shown in its [data-photo-preview]
 *   (a blob: URL, never sent anywhere), so the user sees it is sharp before sending it.
 * - Where the browser can, the photo is shrunk to a JPEG of at most about 1 MB (longest side
 *   1600 px) before the form sends it: users pay for their data, and a phone's camera makes
 *   5-10 MB pictures. Redrawing also leaves the photo's metadata (GPS location) behind.
 * - Without this script, or where shrinking fails, the photo is sent as it is: the server checks
 *   and shrinks it (checkout/kyc/photos.py) either way.
 */
(function () {
  "use strict";

  var LONGEST_SIDE = 1600;
  var TARGET_BYTES = 1024 * 1024;

  function preview(input, file) {
    var img = input.parentNode.querySelector("[data-photo-preview]");
    if (!img || !window.URL || !URL.createObjectURL) return;
    if (img.dataset.url) URL.revokeObjectURL(img.dataset.url);
    img.dataset.url = URL.createObjectURL(file);
    img.src = img.dataset.url;
    img.hidden = false;
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
      done(null); // not an image the browser can read: the server says so
    });
  }

  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[data-photo]") || !input.files || !input.files[0]) {
      return;
    }
    var file = input.files[0];
    preview(input, file);
    shrink(file, function (blob) {
      if (!blob || input.files[0] !== file) return; // another photo was chosen meanwhile
      var list = new DataTransfer();
      list.items.add(new File([blob], "photo.jpg", { type: "image/jpeg" }));
      input.files = list.files; // setting files fires no change event: no loop
      input.dataset.shrunk = String(blob.size);
    });
  });
})();
