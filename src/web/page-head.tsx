/** @jsxImportSource hono/jsx */
/**
 * The `<head>` every page for people shares (the console, approval links): UTF-8, a phone's
 * width, kept out of search engines, the server's own stylesheet, and an optional deferred
 * script from the server (the CSP allows no inline script or style).
 */
export const PageHead = (props: {
	title: string;
	css: string;
	script?: string | undefined;
}) => (
	<head>
		<meta charset="utf-8" />
		<meta name="viewport" content="width=device-width, initial-scale=1" />
		<meta name="robots" content="noindex, nofollow" />
		<title>{props.title}</title>
		<link rel="stylesheet" href={props.css} />
		{props.script && <script src={props.script} defer />}
	</head>
);
