// Sortable tables: click a header to sort by its column; click again to reverse.
// Numeric cells carry data-value (empty = no value, always sorted last).
// Only the runs' rows are sorted: a <tbody class="reported"> (numbers reported in a paper) keeps its place
// after them and is never ranked.
(function () {
  "use strict";
  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) { return null; }
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (numeric) {
      if (raw === "") { return null; }
      var number = parseFloat(raw);
      return isNaN(number) ? null : number;
    }
    return raw.toLowerCase();
  }
  function sortTable(table, header) {
    var index = Array.prototype.indexOf.call(header.parentNode.children, header);
    var numeric = header.getAttribute("data-type") === "number";
    var current = header.getAttribute("aria-sort");
    var descending = current ? current === "ascending" : numeric && header.getAttribute("data-order") !== "asc";
    var body = table.querySelector("tbody:not(.reported)");
    if (!body) { return; }
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, position) { row.setAttribute("data-position", position); });
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      if (x === null && y === null) { return a.getAttribute("data-position") - b.getAttribute("data-position"); }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      if (x < y) { return descending ? 1 : -1; }
      if (x > y) { return descending ? -1 : 1; }
      return a.getAttribute("data-position") - b.getAttribute("data-position");
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(header.parentNode.children, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header) {
        header.tabIndex = 0;
        header.addEventListener("click", function () { sortTable(table, header); });
        header.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortTable(table, header); }
        });
      });
    });
  });
})();
