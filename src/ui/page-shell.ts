/**
 * The dashboard's one HTML page and its style sheet. Nothing user-controlled is ever in them: every run's text
 * is fetched as JSON and put into the page as DOM text by the client code (src/ui/client/dom.ts).
 */
export const INDEX_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>inferbench dashboard</title>
<link rel="stylesheet" href="/assets/style.css">
<script src="/assets/vega.min.js" defer></script>
<script src="/assets/vega-lite.min.js" defer></script>
<script type="module" src="/assets/app/main.js"></script>
</head>
<body>
<header><a class="brand" href="#/">inferbench</a>
<nav><a href="#/" data-nav="runs">Runs</a><a href="#/compare" data-nav="compare">Compare</a><a href="#/live" data-nav="live">Live</a><a href="#/matrices" data-nav="matrices">Matrices</a></nav>
<span id="conn" class="conn" title="live updates from the dashboard server"></span></header>
<main id="app"><p class="note">Loading…</p></main>
<noscript>The dashboard needs JavaScript; <code>inferbench report RUN --format html</code> writes a static report instead.</noscript>
</body></html>
`;

export const STYLE_CSS = `:root{--fg:#222;--muted:#666;--line:#ddd;--accent:#2563a8;--bad:#b3261e;--ok:#1b7f3b}
*{box-sizing:border-box}body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:0;color:var(--fg);background:#fafafa}
header{display:flex;gap:24px;align-items:center;padding:10px 24px;background:#fff;border-bottom:1px solid var(--line);position:sticky;top:0;z-index:2}
header .brand{font-weight:bold;color:var(--fg);text-decoration:none;font-size:1.1em}
nav a{margin-right:16px;color:var(--accent);text-decoration:none}nav a.active{font-weight:bold;text-decoration:underline}
.conn{margin-left:auto;font-size:12px;color:var(--muted)}
main{padding:16px 24px;max-width:1500px;margin:0 auto}
h1{font-size:1.4em;margin:.4em 0}h1,h2,h3,[id]{scroll-margin-top:56px}h2{font-size:1.15em;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;font-size:13px;background:#fff}th,td{border:1px solid #ccc;padding:3px 6px;text-align:center;white-space:nowrap}
th{background:#f0f0f0;white-space:normal;vertical-align:bottom;min-width:4.5em}td:first-child{text-align:left}
.scroll{overflow-x:auto;max-width:100%;scrollbar-width:auto;scrollbar-color:#999 #eee}
table.runs td{text-align:left}table.runs td:nth-child(5),table.runs td:nth-child(6),table.runs td:nth-child(10){white-space:normal;min-width:12em;max-width:24em}table.runs tr:hover td{background:#f4f8fd}
table.kv td{text-align:left;white-space:normal}table.kv td:first-child{font-weight:bold;white-space:nowrap}
.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:8px 0 12px}
.filters label{display:flex;flex-direction:column;font-size:12px;color:var(--muted)}
.filters input,.filters select{font:inherit;font-size:13px;padding:3px 5px;min-width:120px}
button{font:inherit;font-size:13px;padding:4px 12px;cursor:pointer}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure.chart{margin:0;border:1px solid #e5e5e5;background:#fff;padding:8px}
.note{color:var(--muted);font-size:13px}.notes{font-size:13px;color:#444}.warn{color:var(--bad);font-weight:bold}
.badge{display:inline-block;border-radius:8px;padding:0 7px;font-size:11px;font-weight:bold;color:#fff;background:#888;margin-left:4px}
.badge.running{background:var(--accent)}.badge.finished{background:var(--ok)}.badge.failed,.badge.lost,.badge.interrupted{background:var(--bad)}
.live-panel{background:#fff;border:1px solid var(--line);border-left:4px solid var(--accent);padding:8px 14px;margin:8px 0}
.stats{display:flex;flex-wrap:wrap;gap:22px;margin:6px 0}.stat b{display:block;font-size:1.3em}.stat span{font-size:12px;color:var(--muted)}
pre{background:#fff;border:1px solid var(--line);padding:8px;overflow-x:auto;font-size:12px;white-space:pre-wrap;word-break:break-all}
details{margin:8px 0}summary{cursor:pointer;color:var(--accent)}
.empty{padding:20px;color:var(--muted)}`;
