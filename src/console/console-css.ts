/**
 * The console's own rules, served after the shared page style (web/page-css.ts) at
 * `/console/assets/console.css`. Lists, not tables: a row wraps on a 360 px phone.
 */
export const CONSOLE_CSS = `main{max-width:60rem}
.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.5rem 1rem;border-bottom:1px solid var(--line);background:var(--card)}
.brand{font-weight:700;text-decoration:none;color:var(--fg)}
.who{display:flex;gap:.75rem;align-items:center;color:var(--muted);font-size:.9rem;min-width:0;overflow-wrap:anywhere}
form.inline{display:inline}
button.small{min-height:2.25rem;padding:.25rem .75rem;font-size:.9rem}
.muted{color:var(--muted)}
.count{color:var(--muted);font-weight:400}
.section{margin:0 0 1.5rem}
.rows{list-style:none;margin:0;padding:0;border:1px solid var(--line);border-radius:.75rem;background:var(--card);overflow:hidden}
.row{display:flex;flex-direction:column;gap:.2rem;padding:.6rem .9rem;border-top:1px solid var(--line);min-width:0}
.row:first-child{border-top:0}
.row.attention{border-left:4px solid var(--bad)}
.row .title{font-weight:600;overflow-wrap:anywhere;min-width:0}
.row a.title{text-decoration:none}
.row a.title:hover{text-decoration:underline}
.meta{display:flex;flex-wrap:wrap;gap:.2rem .75rem;color:var(--muted);font-size:.85rem;min-width:0;overflow-wrap:anywhere}
.error{display:block;color:var(--bad);font-size:.85rem;overflow-wrap:anywhere}
.warn{color:var(--bad);font-weight:600}
.empty{padding:.6rem .9rem;color:var(--muted)}
.badge{display:inline-block;padding:0 .45rem;border-radius:1rem;border:1px solid var(--line);font-size:.8rem;line-height:1.5;white-space:nowrap}
.badge.pending,.badge.failed,.badge.offline,.badge.unauthorized,.badge.incompatible{border-color:var(--bad);color:var(--bad)}
.badge.running,.badge.starting,.badge.preparing,.badge.connecting,.badge.waiting{border-color:var(--accent);color:var(--accent)}
.badge.completed,.badge.online{border-color:var(--ok);color:var(--ok)}
.pager{display:flex;gap:1rem;margin:-.75rem 0 1.5rem}
.stack{display:grid;gap:.75rem}
.choice{display:grid;gap:.35rem}
.choice button{width:100%}
.option{display:block;margin:0;overflow-wrap:anywhere}
fieldset{border:1px solid var(--line);border-radius:.5rem;margin:0;padding:.75rem;min-width:0}
legend{padding:0 .25rem;overflow-wrap:anywhere}
.actions{margin:1rem 0 0}
.crumbs{margin:0 0 .5rem}
.message{margin:0 0 .75rem}
.message .role{display:block;color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.04em}
.message.user pre{background:var(--info-bg);color:var(--fg)}
.tools{margin:0 0 .75rem}
.files{margin:0 0 .75rem;padding-left:1.25rem;overflow-wrap:anywhere}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em;overflow-wrap:anywhere}
.add{color:var(--ok)}
.del{color:var(--bad)}
label{overflow-wrap:anywhere}
input[type=password],input[type=text]{width:100%}
`;
