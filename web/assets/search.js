// Instant search on the chart list. The page works without it: the form is an ordinary GET.
// Each row carries its searchable text in data-search (lowercase), written by the server.
(function () {
  "use strict";
  var input = document.querySelector("form.search input[type=search]");
  var rows = document.querySelectorAll("ul.charts li[data-search]");
  var count = document.querySelector("[data-count]");
  if (!input || rows.length === 0) { return; }
  function filter() {
    var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var text = row.getAttribute("data-search");
      var match = terms.every(function (term) { return text.indexOf(term) !== -1; });
      row.hidden = !match;
      if (match) { shown += 1; }
    });
    if (count) { count.textContent = shown + (shown === 1 ? " chart" : " charts"); }
  }
  input.addEventListener("input", filter);
})();
