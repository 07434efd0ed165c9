/**
 * The link page's stylesheet, served by the server (`/assets/link.css`): the page's CSP allows
 * styles from the server only, never inline. The look every page for people shares
 * (web/page-css.ts), and the decision form: one column, full-width buttons on a 360 px phone.
 */
import { BASE_CSS } from "../web/page-css.ts";

export const LINK_CSS = `${BASE_CSS}form.decide{display:grid;gap:.75rem}
.choice{display:grid;gap:.35rem}
form.decide button{width:100%;min-height:3rem}
`;
