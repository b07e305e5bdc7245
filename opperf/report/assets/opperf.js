// opperf reports: sortable, filterable tables; no network, no library. The HTML report inlines this
// file and the dashboard shares one copy. When it has run, <html data-opperf-ready="N"> holds the
// number of tables it set up (a headless browser test reads it).
(function () {
  "use strict";
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var value = cell.getAttribute("data-value");
    return value === null ? cell.textContent.trim() : value;
  }
  function compare(a, b) {
    var x = parseFloat(a), y = parseFloat(b);
    var xNum = a !== "" && !isNaN(x), yNum = b !== "" && !isNaN(y);
    if (xNum && yNum) { return x - y; }
    if (xNum !== yNum) { return xNum ? -1 : 1; }  // numbers before blanks and text
    return a.localeCompare(b);
  }
  function sortBy(table, header, index) {
    var body = table.tBodies[0];
    var descending = header.getAttribute("data-sort") === "asc";
    Array.prototype.forEach.call(header.parentNode.cells, function (th) { th.removeAttribute("data-sort"); });
    header.setAttribute("data-sort", descending ? "desc" : "asc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var order = compare(cellValue(r1, index), cellValue(r2, index));
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  function applyFilter(table, text, flaggedOnly) {
    var needle = text.toLowerCase(), shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var visible = (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0) &&
        (!flaggedOnly || row.getAttribute("data-flagged") === "yes");
      row.style.display = visible ? "" : "none";
      shown += visible ? 1 : 0;
    });
    var counter = document.querySelector('[data-count-for="' + table.id + '"]');
    if (counter) { counter.textContent = shown + " of " + table.tBodies[0].rows.length + " rows"; }
  }
  function setUp(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      header.addEventListener("click", function () { sortBy(table, header, index); });
    });
    var search = document.querySelector('input[data-filter-for="' + table.id + '"]');
    var flagged = document.querySelector('input[data-flagged-for="' + table.id + '"]');
    function refresh() { applyFilter(table, search ? search.value : "", flagged ? flagged.checked : false); }
    if (search) { search.addEventListener("input", refresh); }
    if (flagged) { flagged.addEventListener("change", refresh); }
    refresh();
  }
  var tables = document.querySelectorAll("table.data");
  Array.prototype.forEach.call(tables, setUp);
  document.documentElement.setAttribute("data-opperf-ready", String(tables.length));
})();
