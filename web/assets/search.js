// Instant search on the chart list. The page works without it: the form is an ordinary GET.
// As the reader types, the same query is asked with `fragment=1` and the server's rendering
// of the results (escaped there, like every page) replaces the list.
(function () {
  "use strict";
  var form = document.querySelector("form.search");
  var results = document.getElementById("results");
  if (!form || !results || !window.fetch) { return; }
  var timer = null;
  var latest = 0;
  function update() {
    var params = new URLSearchParams(new FormData(form));
    var address = form.getAttribute("action") + "?" + params.toString();
    var request = ++latest;
    fetch(address + "&fragment=1", { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        if (request !== latest) { return; }
        results.innerHTML = html;
        history.replaceState(null, "", address);
      })
      .catch(function () { /* the form still submits as usual */ });
  }
  function later() {
    clearTimeout(timer);
    timer = setTimeout(update, 150);
  }
  form.addEventListener("input", later);
  form.addEventListener("change", later);
})();
