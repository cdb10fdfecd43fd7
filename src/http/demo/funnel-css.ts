/*
 * The stylesheet of GET /flows/funnel, served as /flows/funnel.css (no inline style: CSP
 * style-src 'self'). In code, not a file beside the page: the funnel is read in production too,
 * where an image copies only the build and the templates. Colours keep a 4.5:1 contrast on white.
 */
export const FUNNEL_CSS = `:root {
  --ink: #1b1f23;
  --muted: #4f5762;
  --line: #d0d7de;
  --page: #f6f8fa;
  --accent: #1f5fa8;
  --screen: #e7f1ff;
  --moved: #fff1c2;
  font-family: system-ui, "DejaVu Sans", sans-serif;
  color: var(--ink);
  background: var(--page);
  line-height: 1.45;
}

* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
a[aria-current="page"] { font-weight: 700; color: var(--ink); }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.88em; }

.top { background: #fff; border-bottom: 1px solid var(--line); padding: 1rem 1.5rem 0.75rem; }
h1 { font-size: 1.5rem; margin: 0 0 0.4rem; }
h1 .subtitle { display: block; font-size: 0.95rem; font-weight: normal; color: var(--muted); }
.top p { max-width: 60rem; margin: 0.3rem 0; }
.note { color: var(--muted); font-size: 0.95rem; }
.ranges, #journey-index { display: flex; flex-wrap: wrap; gap: 0.3rem 1.2rem; list-style: none; padding: 0; margin: 0.6rem 0 0; }

/* One column no wider than the screen: a grid item is otherwise as wide as its widest table, and
   the whole page scrolls sideways. A wider table scrolls inside its journey's box. */
main { padding: 1rem 1.5rem 3rem; display: grid; grid-template-columns: minmax(0, 1fr); gap: 1.5rem; }
section.journey, section.compare { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem 1.25rem; overflow-x: auto; min-width: 0; }
.top p, p.outcome, ol.edges li, caption { overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  .top { padding: 0.75rem 0.75rem 0.5rem; }
  main { padding: 0.75rem 0.5rem 2rem; gap: 1rem; }
  section.journey, section.compare { padding: 0.75rem 0.6rem 1rem; }
}
section h2 { font-size: 1.3rem; margin: 0 0 0.3rem; }
section h3 { font-size: 1.05rem; margin: 1rem 0 0.5rem; }

ol.edges { padding-left: 1.4rem; margin: 0 0 1rem; }
ol.edges .screen { background: var(--screen); padding: 0 0.3rem; border-radius: 4px; }
ol.edges .arrow { color: var(--muted); }

table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
caption { text-align: left; color: var(--muted); font-size: 0.9rem; padding-bottom: 0.3rem; }
th, td { border: 1px solid var(--line); padding: 0.35rem 0.55rem; text-align: left; vertical-align: top; }
thead th { background: var(--page); }
tbody th { background: var(--screen); font-weight: 600; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
.pct { color: var(--muted); }
meter { width: 5rem; vertical-align: middle; }
tr.moved > * { background: var(--moved); }
`;
