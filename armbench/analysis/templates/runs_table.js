// The runs table: filter by text and by domain, arm and outcome; sort by a header click.
// Without script the form stays hidden and the whole table is shown.
(() => {
  const form = document.getElementById("runs-filter");
  const table = document.getElementById("runs-table");
  const body = table.tBodies[0];
  const headers = [...table.tHead.rows[0].cells];
  const rows = [...body.rows];
  const selects = [...form.querySelectorAll("select")];

  function filter() {
    const terms = form.elements.text.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const row of rows) {
      const keep = terms.every((term) => row.dataset.search.includes(term))
        && selects.every((select) => !select.value || row.dataset[select.name] === select.value);
      row.hidden = !keep;
      shown += keep;
    }
    form.elements.count.value = `${shown} of ${rows.length} runs`;
  }

  function sortBy(header) {
    const column = headers.indexOf(header);
    const direction = header.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    const numeric = header.dataset.type === "number";
    const key = (row) => {
      const cell = row.cells[column];
      return numeric ? parseFloat(cell.dataset.value) : cell.textContent.trim();
    };
    rows.sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      if (numeric) {
        if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) - Number.isNaN(y); // unknown last
        return direction * (x - y);
      }
      return direction * x.localeCompare(y, undefined, { numeric: true });
    });
    headers.forEach((other) => other.removeAttribute("aria-sort"));
    header.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    body.append(...rows);
  }

  for (const header of headers) {
    header.tabIndex = 0;
    header.title = "sort by this column";
    header.addEventListener("click", () => sortBy(header));
    header.addEventListener("keydown", (event) => { if (event.key === "Enter") sortBy(header); });
  }
  form.addEventListener("input", filter);
  form.addEventListener("submit", (event) => event.preventDefault());
  form.hidden = false;
  table.classList.add("sortable");
  filter();
})();
