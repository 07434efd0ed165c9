/**
 * The link page's stylesheet, served by the server (`/assets/link.css`): the page's CSP allows
 * styles from the server only, never inline. Readable on a 360 px phone: one column, wrapping
 * text, full-width buttons.
 */
export const LINK_CSS = `*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f4f5f7}
main{max-width:40rem;margin:0 auto;padding:1rem}
h1{font-size:1.35rem;margin:.25rem 0 .75rem}
h2{font-size:1rem;margin:1.25rem 0 .5rem}
.card{background:#fff;border:1px solid #d8dce2;border-radius:.75rem;padding:1rem;margin:0 0 1rem}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem .75rem;margin:0}
dt{color:#5b6470;font-size:.9rem}
dd{margin:0;overflow-wrap:anywhere;min-width:0}
.path{display:block;color:#5b6470;font-size:.85rem;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
pre{margin:0;padding:.75rem;background:#0f1720;color:#e6edf3;border-radius:.5rem;white-space:pre-wrap;overflow-wrap:anywhere;font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
form{display:grid;gap:.75rem;margin:0}
.choice{display:grid;gap:.35rem}
button{width:100%;min-height:3rem;font:inherit;font-weight:600;border-radius:.6rem;border:1px solid transparent;cursor:pointer;padding:.6rem 1rem}
button.accept{background:#1a7f37;color:#fff}
button.decline{background:#fff;color:#b42318;border-color:#b42318}
button:focus-visible{outline:3px solid #0969da;outline-offset:2px}
.warning{margin:0;padding:.5rem .75rem;background:#fff8c5;border:1px solid #d4a72c;border-radius:.5rem;font-size:.9rem;overflow-wrap:anywhere}
.notice{padding:.75rem 1rem;border-radius:.6rem;margin:0 0 1rem;overflow-wrap:anywhere}
.notice.ok{background:#dafbe1;border:1px solid #1a7f37}
.notice.info{background:#ddf4ff;border:1px solid #54aeff}
.notice.error{background:#ffebe9;border:1px solid #ff8182}
.foot{color:#5b6470;font-size:.85rem;margin:1rem 0 0;overflow-wrap:anywhere}
`;
