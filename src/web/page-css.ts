/**
 * The look every page for people shares (the console, approval links), as a TypeScript string
 * so the compiled binary carries it; served by the server, since the pages' CSP forbids inline
 * styles. System fonts only; dark and light follow the system; one column that wraps on a
 * 360 px phone.
 */
export const BASE_CSS = `:root{color-scheme:light dark;--bg:#f4f5f7;--fg:#1b1f24;--muted:#5b6470;--card:#fff;--line:#d8dce2;--accent:#0969da;--ok:#1a7f37;--ok-btn:#1a7f37;--ok-bg:#dafbe1;--bad:#b42318;--bad-bg:#ffebe9;--warn-bg:#fff8c5;--warn-line:#d4a72c;--info-bg:#ddf4ff;--info-line:#54aeff;--code-bg:#0f1720;--code-fg:#e6edf3}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--card:#161b22;--line:#30363d;--accent:#4493f8;--ok:#3fb950;--ok-btn:#238636;--ok-bg:#12261e;--bad:#f85149;--bad-bg:#2d1214;--warn-bg:#2e2607;--warn-line:#9e6a03;--info-bg:#0c2d4a;--info-line:#1f6feb;--code-bg:#010409;--code-fg:#e6edf3}}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:40rem;margin:0 auto;padding:1rem}
a{color:var(--accent)}
h1{font-size:1.35rem;margin:.25rem 0 .75rem}
h2{font-size:1rem;margin:1.25rem 0 .5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:.75rem;padding:1rem;margin:0 0 1rem}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem .75rem;margin:0}
dt{color:var(--muted);font-size:.9rem}
dd{margin:0;overflow-wrap:anywhere;min-width:0}
.path{display:block;color:var(--muted);font-size:.85rem;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
pre{margin:0;padding:.75rem;background:var(--code-bg);color:var(--code-fg);border-radius:.5rem;white-space:pre-wrap;overflow-wrap:anywhere;font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
form{margin:0}
button{font:inherit;font-weight:600;border-radius:.6rem;border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer;padding:.5rem 1rem;min-height:2.75rem}
button.accept{background:var(--ok-btn);color:#fff;border-color:transparent}
button.decline{color:var(--bad);border-color:var(--bad)}
button:focus-visible,a:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
input,textarea,select{font:inherit;color:var(--fg);background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.5rem;max-width:100%}
.warning{margin:0;padding:.5rem .75rem;background:var(--warn-bg);border:1px solid var(--warn-line);border-radius:.5rem;font-size:.9rem;overflow-wrap:anywhere}
.notice{padding:.75rem 1rem;border-radius:.6rem;margin:0 0 1rem;overflow-wrap:anywhere}
.notice.ok{background:var(--ok-bg);border:1px solid var(--ok)}
.notice.info{background:var(--info-bg);border:1px solid var(--info-line)}
.notice.error{background:var(--bad-bg);border:1px solid var(--bad)}
.foot{color:var(--muted);font-size:.85rem;margin:1rem 0 0;overflow-wrap:anywhere}
`;
